ORDER = 24  # its place in the curated task list
