ORDER = 27  # its place in the curated task list
