ORDER = 9  # its place in the curated task list
