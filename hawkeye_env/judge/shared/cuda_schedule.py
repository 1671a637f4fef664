"""How a judge process's host thread waits for its GPU: CUDA's context scheduling flag.

By default (``auto``) CUDA spins the host thread in every synchronize when the process has fewer
active contexts than the host has cores, which is every judge process: a worker or replay waiting
for its GPU work holds a core at 100%. With eight candidates in flight on one GPU and 16 host cores,
the host's cores are what bounds the search batch's verdicts (BENCHMARKS.md, "Throughput on the
search policy's batch": host cores busy and CPU seconds per verdict). ``yield`` spins
but yields the core to other threads; ``blocking`` sleeps until the GPU signals. Device time is
measured between CUDA events, on the GPU, so the flag changes what the host burns, not what the
events bound; it adds wake-up latency to a wall-clock measurement, which the timing's clock checks
bound with their slack.

``HAWKEYE_CUDA_SCHEDULE`` (``auto``, ``spin``, ``yield`` or ``blocking``) reaches every worker,
replay and baseline process (``isolation.PASSED_ENV``); ``entry.run`` calls ``apply_from_env``
before the target is imported, so the flag is set on each visible device's primary context before
torch creates it (``cuDevicePrimaryCtxSetFlags``, CUDA's driver API). Unset, nothing is called.
"""

from __future__ import annotations

import ctypes
import os

ENV = "HAWKEYE_CUDA_SCHEDULE"
# CUctx_flags' scheduling values (cuda.h).
FLAGS = {"auto": 0, "spin": 1, "yield": 2, "blocking": 4}


def requested() -> str | None:
    """The schedule ``ENV`` names, or None when unset; raises ``ValueError`` on any other value."""
    value = os.environ.get(ENV, "").strip().lower()
    if not value:
        return None
    if value not in FLAGS:
        raise ValueError(f"{ENV}={value!r}: expected one of {', '.join(FLAGS)}")
    return value


NO_DEVICE = 100  # CUDA_ERROR_NO_DEVICE


def _driver():
    return ctypes.CDLL("libcuda.so.1")


def apply(schedule: str, driver=None) -> int:
    """Set ``schedule``'s flag on every visible device's primary context; returns how many (0 on a
    host without the driver or a device: a CPU worker). Raises ``RuntimeError`` naming the driver
    call that failed."""
    try:
        cuda = driver if driver is not None else _driver()
    except OSError:
        return 0

    def check(name: str, status: int) -> None:
        if status != 0:
            raise RuntimeError(f"{name} failed with CUDA error {status} (setting {ENV}={schedule})")

    status = cuda.cuInit(0)
    if status == NO_DEVICE:
        return 0
    check("cuInit", status)
    count = ctypes.c_int(0)
    check("cuDeviceGetCount", cuda.cuDeviceGetCount(ctypes.byref(count)))
    for ordinal in range(count.value):
        device = ctypes.c_int(0)
        check("cuDeviceGet", cuda.cuDeviceGet(ctypes.byref(device), ordinal))
        check("cuDevicePrimaryCtxSetFlags", cuda.cuDevicePrimaryCtxSetFlags(device, FLAGS[schedule]))
    return count.value


def apply_from_env(driver=None) -> int:
    """``apply`` the schedule ``ENV`` names; 0 and nothing called when it is unset."""
    schedule = requested()
    return 0 if schedule is None else apply(schedule, driver)


__all__ = ["ENV", "FLAGS", "apply", "apply_from_env", "requested"]
