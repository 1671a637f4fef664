ORDER = 12  # its place in the curated task list
