ORDER = 8  # its place in the curated task list
