"""Static checks of the stored chapters: what nbval and the -W build punish, caught early."""

import json
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
NOTEBOOKS = sorted(p for p in BOOK.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def test_every_chapter_is_in_the_toc():
    toc = (BOOK.parent / "_toc.yml").read_text()
    for nb in NOTEBOOKS:
        assert str(nb.relative_to(BOOK.parent).with_suffix("")) in toc, nb


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_are_clean(path):
    cells = json.loads(path.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code, "a chapter without code"
    first = "".join(code[0]["source"])
    assert "SEED" in first and "default_rng(SEED)" in first, "the first code cell must seed a Generator"
    for i, cell in enumerate(code):
        src = "".join(cell["source"]).strip()
        assert cell["execution_count"] is not None, f"code cell {i} never executed"
        assert not re.search(r";\s*$", src.splitlines()[-1]), f"code cell {i} ends with ';'"
        assert "execution" not in cell.get("metadata", {}), f"code cell {i} stores timing metadata"
        for out in cell.get("outputs", []):
            assert out.get("name") != "stderr", f"code cell {i} wrote to stderr"
            assert out["output_type"] != "error", f"code cell {i} raised {out.get('ename')}"
