ORDER = 15  # its place in the curated task list
