"""The served env packaged as OpenEnv users deploy it: ``openenv validate`` against the running server,
``/metadata`` with the package's version, the ``uvicorn hawkeye_env.server.app:app`` entry point built
from environment variables, and the Dockerfile and ``openenv.yaml`` naming files and entry points that
exist (Docker itself is not run here)."""

from __future__ import annotations

import importlib.util
import re
from importlib.metadata import version
from pathlib import Path

import httpx
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy" / "openenv"


@pytest.fixture
def app_module():
    import hawkeye_env.server.app as module

    module._app_from_env.cache_clear()
    yield module
    module._app_from_env.cache_clear()


def test_openenv_validates_the_running_server_and_metadata_has_the_package_version(server):
    from openenv.cli._validation import validate_running_environment

    report = validate_running_environment(server["url"], timeout_s=30)
    assert report["passed"], [c for c in report["criteria"] if not c["passed"]]
    assert report["standard_profile"] == "openenv-http/1.x" and report["mode"] == "simulation"
    metadata = httpx.get(server["url"] + "/metadata").json()
    assert metadata["version"] == version("hawkeye-env") and metadata["name"].startswith("hawkeye/KernelOpt-v")


def test_the_uvicorn_entry_point_is_built_from_the_environment(app_module, monkeypatch, tmp_path):
    from starlette.testclient import TestClient
    from uvicorn.importer import import_from_string

    settings = {"HAWKEYE_JUDGE_DEVICE": "cpu", "HAWKEYE_STORE": str(tmp_path / "v.sqlite3"),
                "HAWKEYE_SERVE_TASKS": "vector_add_fp32", "HAWKEYE_SERVE_CONTEXT": "none",
                "HAWKEYE_SERVE_SESSION_TIMEOUT": "0", "HAWKEYE_SERVE_MAX_PER_CLIENT": "5",
                "HAWKEYE_SERVE_MAX_SESSIONS": "3", "HAWKEYE_SERVE_WORKERS": "1", "HAWKEYE_JUDGE_TIMEOUT": "30"}
    assert set(settings) <= set(app_module.SETTINGS)
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    app = import_from_string("hawkeye_env.server.app:app")
    assert app is app_module.app  # built once, on first access
    with TestClient(app) as client:
        judge = client.get("/judge").json()
        reset = client.post("/reset", json={"task": "softmax_fp32"})
    assert judge["limits"] == {"max_body_bytes": 4 * 2**20, "max_reply_chars": 256 * 1024, "session_timeout_s": None,
                               "max_per_client": 5, "max_sessions": 3}
    assert judge["workers"] == 1 and judge["store"] == settings["HAWKEYE_STORE"] and judge["config"]["timeout_s"] == 30
    assert reset.status_code == 400 and "it serves: vector_add_fp32" in reset.json()["detail"]
    with pytest.raises(AttributeError):
        app_module.not_an_app  # noqa: B018


def dockerfile_lines() -> list[str]:
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_the_dockerfile_copies_what_exists_and_serves_the_entry_point():
    from hawkeye_env.server.app import SETTINGS
    from hawkeye_env.server.limits import MAX_BODY_BYTES

    tomllib = pytest.importorskip("tomllib", reason="Python 3.11's tomllib reads pyproject.toml")
    lines = dockerfile_lines()
    copied = [part for line in lines if line.startswith("COPY ") for part in line.split()[1:-1]]
    assert all((REPO / path).exists() for path in copied), copied
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    packages = {p.rstrip("*") for p in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert packages <= set(copied) and pyproject["project"]["readme"] in copied
    assert "serve" in pyproject["project"]["optional-dependencies"] and 'RUN pip install ".[serve]"' in lines
    ignored = {line.strip("/") for line in (REPO / ".dockerignore").read_text().splitlines()
               if line and not line.startswith("#")}
    assert not ignored & set(copied)
    cmd = next(line for line in lines if line.startswith("CMD "))
    argv = yaml.safe_load(cmd[len("CMD "):])
    assert argv[:2] == ["uvicorn", "hawkeye_env.server.app:app"]
    assert argv[argv.index("--ws-max-size") + 1] == str(MAX_BODY_BYTES) and argv[argv.index("--port") + 1] == "8000"
    env_names = set(re.findall(r"\b(HAWKEYE_[A-Z_]+)=", " ".join(line for line in lines if line.startswith("ENV "))))
    assert env_names and env_names <= set(SETTINGS)
    assert "EXPOSE 8000" in lines


def test_openenv_yaml_names_the_same_app_and_port():
    from uvicorn.importer import import_from_string

    manifest = yaml.safe_load((REPO / "openenv.yaml").read_text())
    assert manifest["spec_version"] == 1 and manifest["runtime"] == "fastapi" and manifest["name"]
    assert manifest["app"] == "hawkeye_env.server.app:app" and manifest["port"] == 8000
    module = manifest["app"].partition(":")[0]
    assert callable(import_from_string(f"{module}:main"))  # OpenEnv's convention: python -m <module>


def test_openenv_validates_the_deployment_directory_and_its_lock_names_the_repository():
    from openenv.cli._validation import validate_multi_mode_deployment

    tomllib = pytest.importorskip("tomllib", reason="Python 3.11's tomllib reads uv.lock")
    valid, issues = validate_multi_mode_deployment(DEPLOY)
    assert valid, issues
    assert not validate_multi_mode_deployment(REPO)[0]  # the root keeps openenv-core in the serve extra
    pyproject = tomllib.loads((DEPLOY / "pyproject.toml").read_text())
    assert "hawkeye-env[serve]" in pyproject["project"]["dependencies"]
    assert (DEPLOY / pyproject["tool"]["uv"]["sources"]["hawkeye-env"]["path"]).resolve() == REPO
    packages = {p["name"]: p for p in tomllib.loads((DEPLOY / "uv.lock").read_text())["package"]}
    deployed = packages[pyproject["project"]["name"]]
    assert {"name": "hawkeye-env", "extra": ["serve"]} in deployed["dependencies"]
    assert packages["hawkeye-env"]["source"] == {"editable": "../../"} and "openenv-core" in packages
    manifest = yaml.safe_load((DEPLOY / "openenv.yaml").read_text())
    assert manifest["app"] == "server.app:app" and manifest["port"] == 8000


def test_the_deployment_server_script_serves_the_projects_app(app_module, monkeypatch, tmp_path):
    for name, value in {"HAWKEYE_JUDGE_DEVICE": "cpu", "HAWKEYE_STORE": str(tmp_path / "v.sqlite3"),
                        "HAWKEYE_SERVE_TASKS": "vector_add_fp32", "HAWKEYE_SERVE_CONTEXT": "none"}.items():
        monkeypatch.setenv(name, value)
    served = []
    monkeypatch.setattr(app_module, "run", lambda app, host, port: served.append((app, host, port)))
    spec = importlib.util.spec_from_file_location("deploy_openenv_server_app", DEPLOY / "server" / "app.py")
    deployed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(deployed)
    deployed.main(port=8123)
    (app, host, port), = served
    try:
        assert (host, port) == ("0.0.0.0", 8123) and app.state.judge.status()["store"] == str(tmp_path / "v.sqlite3")
        assert {"/judge", "/reset", "/step", "/ws"} <= {route.path for route in app.routes}
    finally:
        app.state.judge.close()
    assert deployed.app is app_module.app  # openenv.yaml's server.app:app
