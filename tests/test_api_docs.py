"""Every public object of the library documents its parameters (numpydoc), as scipy.stats does."""

import importlib
import inspect
import pkgutil

import pytest
import renyi

#: Every module of the library, found by walking the package (a new module cannot be missed);
#: private modules (a leading underscore) and the ``python -m`` entry points are left out.
MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(renyi.__path__, "renyi.")
    if not any(part.startswith("_") for part in info.name.split("."))
)


def public_objects():
    for name in MODULES:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == name:
                yield f"{name}.{attr}", obj


OBJECTS = dict(public_objects())


def test_the_api_is_enumerated():
    assert len(OBJECTS) > 75
    assert "renyi.lift.optimum.global_optimum" in OBJECTS or any(k.endswith(".global_optimum") for k in OBJECTS)
    assert "renyi.audit.pipeline.rdp_lower_bound" in OBJECTS


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_numpydoc_sections(name):
    obj = OBJECTS[name]
    doc = inspect.getdoc(obj) or ""
    assert doc.strip(), f"{name} has no docstring"
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return
        assert "Parameters\n---" in doc or "Attributes\n---" in doc, f"{name}: no Parameters/Attributes section"
        return
    params = [p for p in inspect.signature(obj).parameters.values() if p.kind is not p.VAR_KEYWORD]
    if params:
        assert "Parameters\n---" in doc, f"{name}: no Parameters section"
        for p in params:
            assert p.name in doc, f"{name}: parameter {p.name!r} is not documented"
    assert "Returns\n---" in doc or "Yields\n---" in doc, f"{name}: no Returns section"
