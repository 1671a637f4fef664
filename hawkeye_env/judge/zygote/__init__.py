"""The trusted, unsandboxed forker: pre-imports a worker kind's modules and forks workers that join a
``bwrap`` holder's namespaces and drop every privilege (``ns_enter``). No candidate code ever runs
here; it imports only ``shared/`` and ``sandboxed/common/``.
"""
