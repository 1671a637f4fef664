ORDER = 20  # its place in the curated task list
