ORDER = 5  # its place in the curated task list
