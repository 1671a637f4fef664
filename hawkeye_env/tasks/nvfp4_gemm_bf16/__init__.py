ORDER = 16  # its place in the curated task list
