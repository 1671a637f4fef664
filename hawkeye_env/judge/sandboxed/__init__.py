"""Everything below runs inside the OS sandbox (bubblewrap: own PID, mount, network and IPC
namespaces, read-only root, private scratch, unprivileged uid). ``common/`` is every such process's
start and serve loop, timing and the CPU interpreter's fixes; ``candidate/`` is the only subtree that
imports candidate code; ``replay/`` and ``baseline/`` are trusted and never import ``candidate/``.
"""
