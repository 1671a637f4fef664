ORDER = 30  # its place in the curated task list
