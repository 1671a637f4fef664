ORDER = 23  # its place in the curated task list
