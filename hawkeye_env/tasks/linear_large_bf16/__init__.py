ORDER = 13  # its place in the curated task list
