ORDER = 29  # its place in the curated task list
