"""Kernel-development tools: the GPU sweeps behind the units' and experts' tuning constants
(``sweeps/``), the host-launch split of a task's call (``launch_share``), expert and vendor kernels
side by side under Nsight Compute (``vendor_profile``), the expert and vendor outputs against the
float64 reference (``correctness_probe``), and the Markdown tables of their results (``tables``).
They explain a verdict; the verdict itself comes from the judge (``python -m bench.tasks``)."""
