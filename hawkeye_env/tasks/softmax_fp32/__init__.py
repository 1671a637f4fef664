ORDER = 2  # its place in the curated task list
