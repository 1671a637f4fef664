"""Class 21 (write outside scratch, plant modules, reach the host): from inside ``forward`` the
candidate tries to write a file next to the results store (``STORE_DIR``, filled in by the test),
plant ``sitecustomize``/``.pth`` files in site-packages (imported by every later judge process),
remount ``/`` read-write from a nested user namespace, change the host name through
``/proc/sys`` and signal PID 1. It reports each outcome by raising, so the verdict's error
carries the report.

What stops it: the bubblewrap sandbox (``isolation.py``): a read-only root but for the scratch
folder, mounts locked read-only in nested namespaces, own UTS and PID namespaces (the host name
and the host's PID 1 are out of reach). The test also checks each effect from outside.
"""

import json
import os
import site
import subprocess

from torch import nn

STORE_DIR = "@STORE_DIR@"


def _try(fn):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - the report is the point
        return f"{type(exc).__name__}: {exc}"[:200]


def _write(path):
    def go():
        with open(path, "w") as f:
            f.write("planted")
        return "WRITTEN"

    return _try(go)


def _remount():
    done = subprocess.run(["unshare", "-Urm", "sh", "-c", "mount -o remount,rw / && touch /hawkeye_trust_planted"],
                          capture_output=True, text=True, timeout=30)
    return f"rc={done.returncode} {done.stderr.strip()[:120]}"


def attempt():
    return {
        "store_dir": _write(os.path.join(STORE_DIR, "planted.txt")),
        "sitecustomize": _write(os.path.join(site.getsitepackages()[0], "hawkeye_trust_sitecustomize.py")),
        "pth": _write(os.path.join(site.getsitepackages()[0], "hawkeye_trust_planted.pth")),
        "hostname": _write("/proc/sys/kernel/hostname"),
        "remount": _try(_remount),
        "kill_pid1": _try(lambda: os.kill(1, 9) or "SENT"),
        "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    }


class ModelNew(nn.Module):
    def forward(self, a, b):
        raise RuntimeError("<" + "REPORT>" + json.dumps(attempt()) + "</" + "REPORT>")
