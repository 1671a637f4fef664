"""Policies: samplers that turn observations into action texts (``policies/base.py``).

``make_policy(name, **kwargs)`` builds one by name:

=========  ===========================================  ==================================
name       class                                        needs
=========  ===========================================  ==================================
search     ``policies.search.SearchPolicy``             nothing (knob search, no LLM)
openai     ``policies.openai_compat.OpenAICompatPolicy`` an OpenAI-compatible server
hf         ``policies.hf.HFPolicy``                     ``pip install 'hawkeye-env[train]'``
vllm       ``policies.vllm_offline.VLLMPolicy``         ``pip install 'hawkeye-env[vllm]'``
folder     ``policies.folder.FolderPolicy``             a folder of pre-generated solutions
=========  ===========================================  ==================================

Heavy libraries are imported only when their policy is built.
"""

from __future__ import annotations

import importlib

from policies.base import Policy

POLICIES: dict[str, str] = {
    "search": "policies.search:SearchPolicy",
    "openai": "policies.openai_compat:OpenAICompatPolicy",
    "hf": "policies.hf:HFPolicy",
    "vllm": "policies.vllm_offline:VLLMPolicy",
    "folder": "policies.folder:FolderPolicy",
}


def make_policy(name: str, **kwargs) -> Policy:
    """Build the policy registered as ``name`` with ``kwargs``; ``KeyError`` lists the names."""
    if name not in POLICIES:
        raise KeyError(f"unknown policy {name!r}; known policies: {', '.join(POLICIES)}")
    module, _, cls = POLICIES[name].partition(":")
    return getattr(importlib.import_module(module), cls)(**kwargs)


__all__ = ["POLICIES", "Policy", "make_policy"]
