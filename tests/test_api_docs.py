"""Every public object of the library documents its parameters (numpydoc), as scipy.stats does."""

import importlib
import inspect

import pytest

MODULES = [
    "renyi.divergence",
    "renyi.closed_forms",
    "renyi.density",
    "renyi.frequencies",
    "renyi.bandwidth",
    "renyi.mechanisms",
    "renyi.mechanism",
    "renyi.randomized_response",
    "renyi.floor",
    "renyi.delta_method",
    "renyi.audit",
    "renyi.bounds",
    "renyi.verdict",
    "renyi.streaming",
    "renyi.smoothness",
    "renyi.baselines",
    "renyi.reporting",
    "renyi.plotting",
    "renyi.sweeps",
    "renyi.datafiles",
    "renyi.samples_io",
    "renyi.experiments",
    "renyi.lift.model",
    "renyi.lift.certificate",
    "renyi.lift.channels",
    "renyi.lift.mechanisms",
    "renyi.lift.optimum",
    "renyi.libraries",
    "renyi.cli_design",
]


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
    assert "renyi.lift.optimum.global_optimum" in OBJECTS and "renyi.audit.rdp_lower_bound" in OBJECTS


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
