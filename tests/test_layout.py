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


def _modules():
    """Every module of the library: dotted name -> (path, parsed tree)."""
    import ast

    out = {}
    for path in LIB.rglob("*.py"):
        parts = list(path.relative_to(LIB.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = (path, ast.parse(path.read_text(encoding="utf-8")))
    return out


def _imports(name, path, tree, *, top_level_only):
    """(imported module, names) of each relative or renyi import in a module."""
    import ast

    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    nodes = tree.body if top_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").startswith("renyi"):
                target = node.module
            else:
                continue
            yield target, [alias.name for alias in node.names]


def test_no_module_imports_another_modules_private_names():
    """A package may import its own private modules (``lift._numerics``), never a private name."""
    modules = _modules()
    offenders = []
    for name, (path, tree) in modules.items():
        for target, names in _imports(name, path, tree, top_level_only=False):
            private = [
                n for n in names if n.startswith("_") and not n.startswith("__") and f"{target}.{n}" not in modules
            ]
            if private and target != name:
                offenders.append(f"{name} takes {private} from {target}")
    assert not offenders, offenders


def test_re_exports_live_only_in_package_faces():
    offenders = [
        str(path.relative_to(LIB))
        for path in LIB.rglob("*.py")
        if path.name != "__init__.py" and "noqa: F401" in path.read_text(encoding="utf-8")
    ]
    assert not offenders, offenders


def test_no_import_circles_between_modules():
    """Module-level imports form no cycle (a package's face importing its own modules aside)."""
    modules = _modules()
    graph = {name: set() for name in modules}
    for name, (path, tree) in modules.items():
        for target, names in _imports(name, path, tree, top_level_only=True):
            for candidate in [f"{target}.{n}" for n in names] + [target]:
                if candidate in modules and candidate != name and not name.startswith(candidate + "."):
                    if not candidate.startswith(name + "."):  # a face importing its own modules
                        graph[name].add(candidate)
                    break
    seen, stack, cycles = set(), [], []

    def visit(node):
        if node in stack:
            cycles.append(stack[stack.index(node) :] + [node])
            return
        if node in seen:
            return
        seen.add(node)
        stack.append(node)
        for nxt in sorted(graph[node]):
            visit(nxt)
        stack.pop()

    for node in sorted(graph):
        visit(node)
    assert not cycles, cycles


def test_every_package_docstring_names_each_of_its_modules():
    """A package's docstring is its map: a module it does not name is one a reader cannot find."""
    import importlib
    import pkgutil

    missing = {}
    for package in ("renyi", "renyi.audit", "renyi.mechanisms", "renyi.sweeps", "renyi.cli", "renyi.lift"):
        for sub in ("", ".optimum", ".optimum.boxes") if package == "renyi.lift" else ("",):
            module = importlib.import_module(package + sub)
            names = [n for _, n, _ in pkgutil.iter_modules(module.__path__) if n != "__main__"]
            unnamed = [n for n in names if f"{module.__name__}.{n}`" not in (module.__doc__ or "")]
            if unnamed:
                missing[module.__name__] = unnamed
    assert not missing, missing


def test_every_module_is_short_enough_to_read():
    """At most 500 lines a module: past that a module does more than one job (the house rule);
    a split is a pure move, so this test names the file to split."""
    long = {
        str(p.relative_to(LIB)): n
        for p in LIB.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert not long, long


def test_every_function_body_fits_on_a_screen():
    """At most 60 lines of code a function (after its docstring): a longer one does several jobs,
    which the house rule gives one function each.  Names the function to split."""
    import ast

    long = []
    for path in LIB.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = node.body
                documented = isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
                first = body[1] if documented and len(body) > 1 else body[0]
                if node.end_lineno - first.lineno + 1 > 60:
                    long.append(f"{path.relative_to(LIB)}::{node.name}")
    assert not long, long


#: The floors of the house (``farm-studio look lib/renyi``): a module may import from a lower
#: floor only, at module level or inside a function alike.  The package face ``renyi`` loads its
#: names lazily, so it stands on the ground floor with the two private helpers.
FLOORS = {
    "renyi": 1,
    "renyi._docs": 1,
    "renyi._validation": 1,
    "renyi.divergence": 2,
    "renyi.closed_forms": 2,
    "renyi.reporting": 2,
    "renyi.lift": 3,
    "renyi.mechanisms": 3,
    "renyi.audit": 4,
    "renyi.sweeps": 5,
    "renyi.cli": 5,
    "renyi.plotting": 5,
    "renyi.__main__": 6,
}


def _room(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _upward_imports(modules) -> list[str]:
    """Each import, function-level ones included, from a room to one on its floor or above."""
    found = []
    for name, (path, tree) in sorted(modules.items()):
        if name == "renyi":
            continue
        for target, names in _imports(name, path, tree, top_level_only=False):
            for imported in [f"{target}.{n}" for n in names if f"{target}.{n}" in modules] or [target]:
                here, there = _room(name), _room(imported)
                if here != there and FLOORS[there] >= FLOORS[here]:
                    found.append(f"{name} (floor {FLOORS[here]}) imports {imported} (floor {FLOORS[there]})")
    return found


def test_every_import_goes_down_a_floor_even_inside_a_function():
    modules = _modules()
    assert {_room(name) for name in modules} == set(FLOORS), "a new room needs its floor"
    assert not _upward_imports(modules), _upward_imports(modules)


def test_the_floor_check_sees_an_import_inside_a_function():
    import ast

    source = "def f():\n    from ..sweeps import run\n"
    modules = {
        "renyi.audit.x": (LIB / "audit" / "x.py", ast.parse(source)),
        "renyi.sweeps.run": (LIB / "sweeps" / "run.py", ast.parse("")),
    }
    assert _upward_imports(modules) == ["renyi.audit.x (floor 4) imports renyi.sweeps.run (floor 5)"]
