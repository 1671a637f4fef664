ORDER = 7  # its place in the curated task list
