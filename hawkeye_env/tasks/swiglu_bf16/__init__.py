ORDER = 18  # its place in the curated task list
