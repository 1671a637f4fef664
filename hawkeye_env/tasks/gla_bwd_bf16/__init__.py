ORDER = 42  # its place in the curated task list
