ORDER = 3  # its place in the curated task list
