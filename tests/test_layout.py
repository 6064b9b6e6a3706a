"""The README's layout block names every module of the library, and nothing that is not there."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib" / "renyi"


def listed_modules():
    """Files under lib/renyi named in the README's layout block, as paths relative to it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Layout\n\n```\n(.*?)```", text, flags=re.S).group(1)
    stack, found = [], set()
    for line in block.splitlines():
        indent = (len(line) - len(line.lstrip(" "))) // 2
        names = re.split(r"\s{2,}", line.strip())[0].split()
        stack = stack[:indent]
        for name in names:
            if name.endswith("/"):
                stack = stack[:indent] + [name.rstrip("/")]
            elif name.endswith(".py"):
                found.add("/".join(stack + [name]))
    prefix = "lib/renyi/"
    return {path[len(prefix) :] for path in found if path.startswith(prefix)}


def test_the_layout_block_lists_every_module_and_only_those():
    actual = {p.relative_to(LIB).as_posix() for p in LIB.rglob("*.py")}
    listed = listed_modules()
    assert listed, "no module found in the README's layout block"
    assert not actual - listed, f"modules missing from the README's layout: {sorted(actual - listed)}"
    assert not listed - actual, f"the README's layout names files that do not exist: {sorted(listed - actual)}"


def test_the_layout_check_can_fail():
    """A README without one module is caught (the parser sees nesting, not just names)."""
    listed = listed_modules()
    assert "lift/optimum/boxes/tree.py" in listed and "audit/pipeline.py" in listed
    assert "tree.py" not in listed  # nested names are not flattened
