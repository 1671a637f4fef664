ORDER = 1  # its place in the curated task list
