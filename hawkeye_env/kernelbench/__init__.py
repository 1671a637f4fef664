"""KernelBench problem files as hawkeye tasks.

``importer`` converts a KernelBench level folder into a user task folder (``hawkeye tasks
import-kernelbench``); ``source`` reads a problem file (refusals, size constants, a forward on the
meta device), ``shapes`` scales its sizes down to a CPU shape, ``task`` is the class every
imported task module builds on, and ``trials`` the judge's hooks that draw an imported task's
inputs and weights.
"""
