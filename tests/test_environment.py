"""The conda route (environment.yml) and the pip route (requirements.txt) pin the same stack."""

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pins(lines):
    out = {}
    for line in lines:
        line = line.split("#")[0].strip().lstrip("- ").strip()
        m = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)==(\S+)", line)
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def test_environment_yml_pins_equal_requirements():
    req = _pins((ROOT / "requirements.txt").read_text().splitlines())
    env_text = (ROOT / "environment.yml").read_text()
    env = _pins(env_text.splitlines())
    assert req, "requirements.txt has no exact pins"
    assert env == req
    assert "python=3.11" in env_text


def test_every_requirement_is_pinned_exactly():
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            assert "==" in line, f"not pinned exactly: {line}"


def test_core_stack_is_pinned():
    req = _pins((ROOT / "requirements.txt").read_text().splitlines())
    for name in [
        "numpy",
        "scipy",
        "statsmodels",
        "matplotlib",
        "jupyter-book",
        "nbval",
        "pytest",
        "ipykernel",
        "hypothesis",
    ]:
        assert name in req, name
    assert req["jupyter-book"].startswith("1."), "Jupyter Book 2.x ignores _config.yml"


def test_binder_environment_installs_the_pins_and_the_library():
    """Binder (repo2docker) reads .binder/: the same pins, Python 3.11, then renyi itself."""
    binder = ROOT / ".binder"
    reqs = (binder / "requirements.txt").read_text().split()
    assert "-r" in reqs and "../requirements.txt" in reqs
    assert (binder / "runtime.txt").read_text().strip() == "python-3.11"
    post = binder / "postBuild"
    assert os.access(post, os.X_OK), "postBuild must be executable"
    assert "pip install --no-deps -e ." in post.read_text()


def test_pages_workflow_builds_with_make_book():
    """Publishing uses the reader's own build command and uploads its output."""
    text = (ROOT / ".github" / "workflows" / "pages.yml").read_text()
    assert "run: make book" in text and "path: _build/html" in text


def test_no_placeholder_address_reaches_readers():
    """repository.url lives only in _config.yml; until it is real, no button or page shows it."""
    config = (ROOT / "_config.yml").read_text()
    url = re.search(r"^\s+url:\s*(\S+)", config, re.M).group(1)
    placeholder = "OWNER" in url
    for key in ("use_repository_button", "use_issues_button"):
        value = re.search(rf"{key}:\s*(\w+)", config).group(1)
        assert value == "false" or not placeholder, f"{key} is on while repository.url is a placeholder"
    binder = re.search(r'binderhub_url:\s*"?([^"\s]*)"?', config).group(1)
    assert not binder or not placeholder, "a Binder button would point to a placeholder repository"
    shown = [ROOT / "CITATION.cff", *sorted((ROOT / "book").rglob("*.md")), *sorted((ROOT / "book").rglob("*.ipynb"))]
    for path in shown:
        text = path.read_text(encoding="utf-8")
        assert url not in text and "renyi-privacy/renyi-compendium" not in text, path
