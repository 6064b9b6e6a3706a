"""Static checks of the stored chapters: what nbval and the -W build punish, caught early."""

import json
import re
import sys
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


# A float literal in stored text: digits, optional fraction, optional exponent.
_FLOAT = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")
#: Significant digits from which a stored number carries CPU-dependent last bits.
MAX_SIGNIFICANT = 11


def _significant_digits(literal: str, *, trailing_zeros: bool = True) -> int:
    digits = literal.lower().lstrip("+-").split("e")[0].replace(".", "").lstrip("0")
    return len(digits if trailing_zeros else digits.rstrip("0"))


def cpu_dependent_numbers(notebook: Path):
    """(cell, literal, reason) for every stored number whose digits depend on the CPU.

    Two kinds: a float with 12 or more significant digits (its last bits come from
    numpy's SIMD kernels, which differ between CPU generations), and a non-zero
    magnitude below 1e-12 with two or more digits (a round-off error, all of whose
    digits are such bits).
    """
    found = []
    code = [c for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code"]
    for i, cell in enumerate(code):
        for out in cell.get("outputs", []):
            texts = ["".join(out["text"])] if "text" in out else []
            for mime, value in out.get("data", {}).items():
                if mime.startswith("image/") or "/image/" in mime:
                    continue  # figures, including glued ones
                texts.append("".join(value) if isinstance(value, list) else str(value))
            for text in texts:
                for match in _FLOAT.finditer(text):
                    literal = match.group()
                    if not any(ch in literal for ch in ".eE"):
                        continue  # integers are exact
                    if _significant_digits(literal) > MAX_SIGNIFICANT:
                        found.append((i, literal, "more than 11 significant digits"))
                    elif 0 < abs(float(literal)) < 1e-12 and _significant_digits(literal, trailing_zeros=False) > 1:
                        # one non-zero digit (1e-14, 1.0e-14) is a parameter, not a measured error
                        found.append((i, literal, "round-off level; print it with format_roundoff"))
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_numbers_do_not_depend_on_the_cpu(path):
    bad = cpu_dependent_numbers(path)
    assert not bad, f"{path.name}: " + "; ".join(f"cell {i}: {lit} ({why})" for i, lit, why in bad)


def test_the_cpu_guard_catches_a_full_precision_glue(tmp_path):
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}
    nb["cells"].append(
        {
            "cell_type": "code",
            "execution_count": 99,
            "metadata": {},
            "source": ["glue(...)"],
            "outputs": [
                {
                    "output_type": "display_data",
                    "metadata": {},
                    "data": {"application/papermill.record/text/plain": "1.1018592115258954"},
                },
                {"output_type": "stream", "name": "stdout", "text": ["tau 1.0e-14, err 8.7e-16, 0.25\n"]},
            ],
        }
    )
    bad_nb = tmp_path / "bad.ipynb"
    bad_nb.write_text(json.dumps(nb))
    reasons = [(lit, why.split()[0]) for _, lit, why in cpu_dependent_numbers(bad_nb)]
    assert reasons == [("1.1018592115258954", "more"), ("8.7e-16", "round-off")]


#: Widest figure, in inches at the book's 100 dpi: a cell's output box is about 760 px wide
#: (measured in Chromium at 1400 and 1920 px), so a figure up to this width is shown at its
#: own size, never shrunk.
MAX_FIGURE_WIDTH = 7.5
#: Smallest font size a chapter may ask for (points at that size).
MIN_FONT = 8


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_figure_is_captioned_named_and_referenced(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    prose = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    glued_captions = re.findall(r"```\{glue:figure\}\s*(\S+)\s*\n:name:\s*(\S+)", prose)
    named = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        shows = any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))
        figure = cell["metadata"].get("mystnb", {}).get("figure", {})
        if shows:
            assert figure.get("caption") and figure.get("name"), f"{path.name}: cell {i} has an uncaptioned figure"
            named.append(figure["name"])
    named += [name for _, name in glued_captions]
    for name in named:
        assert f"{{numref}}`{name}`" in prose, f"{path.name}: figure {name} is never referenced with numref"
    if path.parent.name in ("part1", "part2"):
        assert named, f"{path.name}: a chapter needs at least one captioned figure"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_figures_are_legible(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        for size in re.findall(r"fontsize=(\d+(?:\.\d+)?)", src) + re.findall(r"labelsize=(\d+(?:\.\d+)?)", src):
            assert float(size) >= MIN_FONT, f"{path.name}: cell {i} asks for {size}-pt text"
        widths = re.findall(r"figsize=\((\d+(?:\.\d+)?),", src) + re.findall(r"width=(\d+(?:\.\d+)?),", src)
        for width in widths:
            assert float(width) <= MAX_FIGURE_WIDTH, f"{path.name}: cell {i} draws a {width}-inch figure"


# ------------------------------------------------- printed digits never exceed the glued ones

_GLUE_ROLE = re.compile(r"\{glue:text\}`(?:([\w/.-]+\.ipynb)::)?([\w-]+):([^`]+)`")


def _glued_digits(notebook: Path) -> dict:
    """key -> (value, digits) for every ``glue(key, significant(x, digits))`` of a chapter."""
    import ast

    found, values = {}, {}
    for cell in json.loads(notebook.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        for node in ast.walk(ast.parse("".join(cell["source"]))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "glue" and len(node.args) >= 2):
                continue
            key, value = node.args[0], node.args[1]
            if not (isinstance(key, ast.Constant) and isinstance(value, ast.Call)):
                continue
            if getattr(value.func, "id", "") == "significant":
                digits = [k.value for k in value.keywords if k.arg == "digits"]
                digits = digits or ([value.args[1]] if len(value.args) > 1 else [])
                found[key.value] = digits[0].value if digits and isinstance(digits[0], ast.Constant) else 6
        for out in cell.get("outputs", []):
            record = out.get("data", {}).get("application/papermill.record/text/plain")
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if record is not None and name:
                values[name] = "".join(record)
    return {k: (values.get(k), d) for k, d in found.items()}


def glue_formats_printing_too_many_digits():
    """(page, key, format, printed, digits) where a format prints more significant digits than glued."""
    bad = []
    pages = [*NOTEBOOKS, *BOOK.rglob("*.md")]
    for page in pages:
        text = page.read_text()
        if page.suffix == ".ipynb":
            text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"] if c["cell_type"] == "markdown")
        for other, key, fmt in _GLUE_ROLE.findall(text):
            source = (page.parent / other) if other else page  # myst-nb: relative to the page
            if source.suffix != ".ipynb":
                continue
            value, digits = _glued_digits(source).get(key, (None, None))
            if value is None or fmt[-1] not in "fge":
                continue
            printed = format(float(value), fmt)
            # zeros before a missing decimal point are magnitude, not digits ("4000" at 1 digit)
            if _significant_digits(printed, trailing_zeros="." in printed) > digits:
                bad.append((page.name, key, fmt, printed, digits))
    return bad


@pytest.mark.slow
def test_no_glued_number_is_printed_with_more_digits_than_it_carries():
    """A value glued at 6 significant digits printed with 7 pads a digit nobody computed."""
    assert glue_formats_printing_too_many_digits() == []


# ----------------------------------------- every number in the prose is glued, or allowed

#: Numbers that may stand typed in the prose: parameters of the set-ups, numbers the papers
#: print (compared with glued values beside them), versions and identifiers.  Anything else a
#: sentence states must come from a cell through a glue role.
ALLOWED_NUMBERS = {
    # parameters: error levels, budgets, priors and leakage matrices, noise scales, rates
    "0.01",
    "0.02",
    "0.05",
    "0.1",
    "0.10",
    "0.15",
    "0.2",
    "0.25",
    "0.3",
    "0.35",
    "0.4",
    "0.40",
    "0.5",
    "0.70",
    "0.80",
    "0.85",
    "0.90",
    "0.95",
    "1.01",
    "1.5",
    "3.5",
    # bandwidth rule constant (1.06 s n^-1/5 family) and the one-sided 95 % normal quantile
    "1.06",
    "1.645",
    # printed in Zamani et al.: delta0, delta_bar / rho_eps, eta_max (compared with glued values)
    "0.2845",
    "0.0361",
    "0.3902",
    # sample counts of simulations (parameters)
    "1,000",
    "20,000",
    # Python versions, the CITATION-cff version, arXiv identifiers, a book's section number
    "3.11",
    "3.12",
    "3.13",
    "4.0",
    "2212.04739",
    "2610.13685",
    "1.4",
}
_NUMBER = re.compile(r"(?<![\w.{`\\])(\d+\.\d+|\d{1,3}(?:,\d{3})+)(?!\w|\.\d)")


def typed_numbers():
    """(page, number) for every decimal or grouped integer in prose outside glue roles and code."""
    found = []
    for page in [*NOTEBOOKS, *sorted(BOOK.rglob("*.md"))]:
        text = page.read_text()
        if page.suffix == ".ipynb":
            text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"] if c["cell_type"] == "markdown")
        text = re.sub(r"\{glue:[a-z]*\}`[^`]*`", "", text)
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        text = re.sub(r"`[^`]*`", "", text)
        found += [(page.name, m.group(1)) for m in _NUMBER.finditer(text) if m.group(1) not in ALLOWED_NUMBERS]
    return found


def test_no_number_in_the_prose_is_typed():
    """A result typed into a sentence goes stale when the code changes; a glued one cannot."""
    assert typed_numbers() == []


def test_the_typed_number_scan_can_fail(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("The bound is 0.0372 here, {glue:text}`x:.3f` there, and `0.5` in code.\n")
    monkeypatch.setattr(sys.modules[__name__], "NOTEBOOKS", [])
    monkeypatch.setattr(sys.modules[__name__], "BOOK", tmp_path)
    assert typed_numbers() == [("page.md", "0.0372")]
