ORDER = 14  # its place in the curated task list
