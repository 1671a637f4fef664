ORDER = 17  # its place in the curated task list
