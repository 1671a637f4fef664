ORDER = 41  # its place in the curated task list
