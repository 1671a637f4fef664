ORDER = 19  # its place in the curated task list
