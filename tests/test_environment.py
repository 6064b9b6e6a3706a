"""The conda route (environment.yml) and the pip route (requirements.txt) pin the same stack."""

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
    for name in ["numpy", "scipy", "statsmodels", "matplotlib", "jupyter-book", "nbval",
                 "pytest", "ipykernel", "hypothesis"]:
        assert name in req, name
    assert req["jupyter-book"].startswith("1."), "Jupyter Book 2.x ignores _config.yml"
