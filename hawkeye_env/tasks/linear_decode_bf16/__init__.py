ORDER = 11  # its place in the curated task list
