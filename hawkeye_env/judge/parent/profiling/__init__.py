"""Profiles of a source's kernels on request (the env's profile action): ``run.profile_source`` and
``run.profile_report`` through the judge's own processes, ``report`` for the data and its text."""
