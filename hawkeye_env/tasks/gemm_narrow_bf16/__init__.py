ORDER = 10  # its place in the curated task list
