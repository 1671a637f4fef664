ORDER = 6  # its place in the curated task list
