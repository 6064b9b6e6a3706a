"""Every constant of the Part II optimiser lives in its settings object, with its reason.

:class:`~renyi.lift.optimum.settings.Margins` holds what the certificate relies on and
:class:`~renyi.lift.optimum.heuristics.Heuristics` what only sets the pace; a bare small
literal in the optimiser's code is a guard or a knob that no reader can find or change.
"""

import ast
from pathlib import Path

OPTIMUM = Path(__file__).resolve().parents[1] / "lib" / "renyi" / "lift" / "optimum"
#: Literals at or below this size (in absolute value, nonzero) are tolerances or guards.
SMALL = 1e-2


def _documented_elsewhere(tree):
    """Docstrings, and the defaults of parameters (each described in its docstring)."""
    kinds = (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)
    nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, kinds)]
    skip = {id(n.body[0].value) for n in nodes if n.body and isinstance(n.body[0], ast.Expr)}
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defaults = node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
            skip |= {id(d) for d in defaults}
    return skip


def bare_constants(source: str) -> list[tuple[int, str]]:
    """Small float literals in code, and numbers bound to module-level names."""
    tree = ast.parse(source)
    skip = _documented_elsewhere(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in skip and type(node.value) is float:
            if 0 < abs(node.value) <= SMALL:
                found.append((node.lineno, repr(node.value)))
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant):
            if type(node.value.value) in (int, float) and type(node.value.value) is not bool:
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_scan_finds_a_bare_guard_and_a_module_knob():
    source = 'X = 3\n\ndef f(t, rtol=1e-6):\n    "Less 1e-9 of t."\n    return t * (1 - 1e-9) + 0.5\n'
    assert bare_constants(source) == [(5, "1e-09"), (1, "X = 3")]


def test_no_guard_or_knob_of_the_optimiser_lives_outside_its_settings():
    found = {
        f"{path.relative_to(OPTIMUM)}:{line} {text}"
        for path in sorted(OPTIMUM.rglob("*.py"))
        if path.name not in ("settings.py", "heuristics.py")
        for line, text in bare_constants(path.read_text())
    }
    assert not found, sorted(found)
