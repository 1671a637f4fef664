ORDER = 40  # its place in the curated task list
