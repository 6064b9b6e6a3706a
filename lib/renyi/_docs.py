"""Docstring sections written once and shared, in the manner of scipy's ``doccer``.

Several public functions take the same arguments (a model, a budget and an order; two
density estimates and a floor), and numpydoc wants each documented in full.  Writing the
block once keeps the descriptions identical, so a correction reaches every function.

A docstring line that is only ``{{name}}`` is replaced by the block ``name``, indented
like the placeholder::

    @fill(model_eps_order=MODEL_EPS_ORDER)
    def f(model, eps, order):
        '''Summary.

Parameters
----------
        {{model_eps_order}}
        '''

``tests/test_api_docs.py`` checks that no placeholder is left in a rendered docstring.
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["fill", "CLI_MAIN"]

_PLACEHOLDER = re.compile(r"^(\s*)\{\{(\w+)\}\}\s*$")

#: The Parameters and Returns of a module's ``main(argv)`` command line.
CLI_MAIN = """
Parameters
----------
argv : list of str, optional
    The arguments (default: ``sys.argv[1:]``).

Returns
-------
int
    The exit status.
"""


def fill(**blocks):
    """Decorator: substitute the ``{{name}}`` lines of a docstring by the given blocks.

    Parameters
    ----------
    **blocks : str
        The sections, by placeholder name; each is dedented, then indented like its
        placeholder.

    Returns
    -------
    callable
        The decorator, which returns the object it was given with its ``__doc__`` filled.
    """

    def decorate(obj):
        if obj.__doc__ is None:  # python -OO strips docstrings
            return obj
        out = []
        for line in obj.__doc__.splitlines():
            match = _PLACEHOLDER.match(line)
            if match is None:
                out.append(line)
                continue
            indent, name = match.groups()
            if name not in blocks:
                raise KeyError(f"{obj.__qualname__}: no docstring block named {name!r}")
            block = textwrap.dedent(blocks[name]).strip("\n")
            out.extend(indent + text if text else "" for text in block.splitlines())
        obj.__doc__ = "\n".join(out)
        return obj

    return decorate
