"""Pure data and functions any process of the judge may import; imports nothing of the judge outside
this folder: the verdict (``verdict``), what a launch plan and a CPU plan's kernel entry are
(``launch_plan``, ``source_kernels``), how inputs are drawn and laid out (``inputs``, ``layouts``),
the timing plan's fields (``timing_plan``), the baselines' shared names (``baseline_names``) and the
GPU wait setting every started process applies (``cuda_schedule``).
"""
