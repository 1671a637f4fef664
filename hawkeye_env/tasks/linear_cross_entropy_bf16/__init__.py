ORDER = 31  # its place in the curated task list
