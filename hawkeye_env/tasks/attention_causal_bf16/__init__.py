ORDER = 25  # its place in the curated task list
