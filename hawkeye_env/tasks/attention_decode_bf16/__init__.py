ORDER = 28  # its place in the curated task list
