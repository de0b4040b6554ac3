"""No Docker engine here: parse the Dockerfile and check what it promises."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def instructions() -> list[tuple[str, str]]:
    text = (ROOT / "Dockerfile").read_text()
    joined = re.sub(r"\\\n", " ", text)  # line continuations
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_dockerfile_base_user_health_and_copies() -> None:
    ins = instructions()
    assert ins[0] == ("FROM", "python:3.11-slim")
    users = [rest for word, rest in ins if word == "USER"]
    assert users and users[-1] not in ("root", "0")
    health = [rest for word, rest in ins if word == "HEALTHCHECK"]
    assert len(health) == 1 and "/api/health" in health[0]
    assert any(word == "CMD" and "serve" in rest for word, rest in ins)
    # every COPY source exists in the repository
    copied = []
    for word, rest in ins:
        if word == "COPY":
            *sources, _dest = rest.split()
            for src in sources:
                assert (ROOT / src).exists(), f"COPY {src}: no such file"
                copied.append(src)
    # ... and together they cover every module and package pyproject installs
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    for module in project["py-modules"]:
        assert f"{module}.py" in copied, module
    for pattern in project["packages.find"]["include"] if "packages.find" in project else \
            project["packages"]["find"]["include"]:
        assert pattern.rstrip("*") in copied, pattern
    # the dependencies are pyproject's pins (pip install .), with the CPU torch index
    run = " ".join(rest for word, rest in ins if word == "RUN")
    assert "pip install" in run and re.search(r"pip install [^&]*\s\.(\s|$)", run)
    assert "download.pytorch.org/whl/cpu" in run
    # the local model's llama.cpp library needs the OpenMP runtime, which the slim image lacks
    assert re.search(r"apt-get install [^&]*\blibgomp1\b", run)
    # the image runs the product only: no dev, evals or Studio extras
    assert not re.search(r"pip install [^&]*\.\[", run)
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and ".thotqen" in ignored
