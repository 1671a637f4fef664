ORDER = 26  # its place in the curated task list
