ORDER = 4  # its place in the curated task list
