ORDER = 22  # its place in the curated task list
