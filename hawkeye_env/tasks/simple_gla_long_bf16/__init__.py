ORDER = 21  # its place in the curated task list
