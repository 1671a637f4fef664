"""A tiny local chat model shared by the training tests (built once per session, no download)."""

import pytest
import trl  # noqa: F401 - the dev extra installs the train stack; a missing one fails loudly, never skips


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    from training.tiny_model import build_tiny_model

    return str(build_tiny_model(tmp_path_factory.mktemp("tiny")))


@pytest.fixture(autouse=True)
def wandb_sandbox(tmp_path, monkeypatch):
    """No API key, W&B's own folders in tmp, and the env vars the recipes set restored afterwards."""
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.setenv("WANDB_SILENT", "true")
    for var in ("WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    for var in ("WANDB_DIR", "WANDB_MODE", "WANDB_PROJECT"):
        monkeypatch.setenv(var, "")
        monkeypatch.delenv(var)
