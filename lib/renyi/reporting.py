"""Numbers as a reader sees them: values that are the same on every CPU.

numpy's SIMD kernels for ``exp``, ``log`` and friends may differ in the last
bits from one CPU generation to the next (numpy allows this).  A chapter that
stores a float's full ``repr`` therefore fails nbval on another machine.  The
chapters glue and print numbers only through these helpers, or through
explicit formats with few digits.

* :func:`significant` rounds to a fixed number of significant digits, far
  more than the prose shows and far fewer than the bits that differ.
* :func:`format_roundoff` prints an error that is at round-off level as
  ``"< 1e-12"``: its digits *are* the bits that differ between CPUs.
* :func:`count` writes a sample size as a table column can hold it (``10⁶``).
* :class:`Table` shows formatted rows as a real table in the book (Markdown) and as
  aligned text in a terminal.
"""

from __future__ import annotations

import math

from ._validation import as_int, as_positive_scalar, as_real_scalar

__all__ = ["significant", "format_roundoff", "roundoff_ceiling", "ROUNDOFF", "count", "Table"]

#: Errors below this are reported as round-off; double precision leaves about
#: 1e-16 per operation and a few thousand operations per integral.
ROUNDOFF = 1e-12


def significant(value, digits: int = 6) -> float:
    """``value`` as a Python float rounded to ``digits`` significant digits.

    Parameters
    ----------
    value : float
        A finite real number (numpy scalars are accepted).
    digits : int, default 6
        Significant digits kept, 1 to 15.  Six is ample for prose (which shows
        at most four) and leaves a margin of about 1e9 against last-bit
        differences between SIMD code paths.

    Returns
    -------
    float
        A plain Python ``float``, as ``myst_nb.glue`` wants it.

    Examples
    --------
    >>> significant(1.1018592115258954)
    1.10186
    >>> significant(6.152746064461407e-07, 3)
    6.15e-07
    """
    digits = as_int(digits, "digits", maximum=15)
    x = as_real_scalar(value, "value")
    if x == 0.0:
        return 0.0
    return float(f"{x:.{digits - 1}e}")


def format_roundoff(value, fmt: str = ".1e", *, resolution: float = ROUNDOFF) -> str:
    """Format a non-negative error, or ``"< 1e-12"`` when it is at round-off level.

    Parameters
    ----------
    value : float
        An absolute or relative error, >= 0.
    fmt : str, default ".1e"
        Format spec for errors at or above ``resolution``.
    resolution : float, default :data:`ROUNDOFF`
        Errors below it print as ``"< {resolution:g}"``.

    Returns
    -------
    str

    Examples
    --------
    >>> format_roundoff(6.2e-07)
    '6.2e-07'
    >>> format_roundoff(8.7e-16)
    '< 1e-12'
    """
    x = as_real_scalar(value, "value")
    if x < 0:
        raise ValueError(f"value must be a non-negative error, got {x!r}")
    res = as_positive_scalar(resolution, "resolution")
    if x < res:
        return f"< {res:g}"
    return format(x, fmt)


def roundoff_ceiling(value, *, resolution: float = ROUNDOFF) -> float:
    """``max(value, resolution)`` rounded to 2 significant digits: a stable upper bound to glue.

    Examples
    --------
    >>> roundoff_ceiling(2.1116441928370477e-13)
    1e-12

    Parameters
    ----------
    value : float
        A round-off-level error (>= 0).
    resolution : float, default 1e-12

    Returns
    -------
    float
    """
    x = as_real_scalar(value, "value")
    res = as_positive_scalar(resolution, "resolution")
    return significant(max(x, res), 2) if math.isfinite(x) else x


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def count(n) -> str:
    """A count as short as it is exact: ``10⁶``, ``2·10⁵`` or ``1,500``.

    A digit times a power of ten from 100 on is written as such; any other count in digits
    with thousands separators.  Sample sizes in the study tables are such round numbers; written ``1,000,000`` they
    make a table column twice as wide, which on a phone pushes the result columns off the
    screen.

    Parameters
    ----------
    n : int
        A non-negative integer.

    Returns
    -------
    str
        The exact value, never rounded.

    Examples
    --------
    >>> from renyi.reporting import count
    >>> [count(n) for n in (50, 100, 10_000, 200_000, 1_500, 123_456)]
    ['50', '10²', '10⁴', '2·10⁵', '1,500', '123,456']
    """
    n = as_int(n, "n", minimum=0)
    digits = str(n)
    mantissa, zeros = digits.rstrip("0"), len(digits) - len(digits.rstrip("0"))
    if len(mantissa) != 1 or zeros < 2:
        return f"{n:,}"
    power = "10" + str(zeros).translate(_SUPERSCRIPT)
    return power if mantissa == "1" else f"{mantissa}·{power}"


class Table:
    r"""Rows of already formatted cells, shown as a table.

    In a notebook the last expression of a cell that is a ``Table`` renders as a
    Markdown table (``_repr_markdown_``), which Jupyter Book turns into an HTML table;
    ``print`` and the terminal get aligned plain text.  Cells are formatted by the caller,
    with few digits, so that the stored output is the same on every CPU.

    Parameters
    ----------
    header : sequence of str
        Column titles (Markdown, so ``$\lambda$`` is typeset).
    rows : sequence of sequences
        One sequence of cells per row, as many as ``header``; non-strings are ``str``-ed.
    align : str, optional
        One character per column, ``"l"`` or ``"r"``; default: the first column left,
        the others right (labels, then numbers).

    Examples
    --------
    >>> from renyi.reporting import Table
    >>> print(Table(["order", "bound"], [[2, f"{0.51:.3f}"], [5, f"{0.72:.3f}"]]))
    order  bound
    2      0.510
    5      0.720
    >>> print(Table(["order", "bound"], [[2, "0.510"]])._repr_markdown_())
    | order | bound |
    |:--|--:|
    | 2 | 0.510 |
    """

    def __init__(self, header, rows, *, align: str | None = None):
        self.header = [str(h) for h in header]
        self.rows = [[str(c) for c in row] for row in rows]
        width = len(self.header)
        if width == 0:
            raise ValueError("header must name at least one column")
        for i, row in enumerate(self.rows):
            if len(row) != width:
                raise ValueError(f"row {i} has {len(row)} cells but the header has {width}")
        align = align or "l" + "r" * (width - 1)
        if len(align) != width or set(align) - {"l", "r"}:
            raise ValueError(f"align must give 'l' or 'r' for each of the {width} columns, got {align!r}")
        self.align = align

    def _repr_markdown_(self) -> str:
        rule = "|" + "|".join(":--" if a == "l" else "--:" for a in self.align) + "|"
        lines = ["| " + " | ".join(self.header) + " |", rule]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines)

    def __str__(self) -> str:
        widths = [max(len(r[j]) for r in [self.header, *self.rows]) for j in range(len(self.header))]

        def line(cells):
            return "  ".join(
                c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(cells, widths, self.align)
            ).rstrip()

        return "\n".join(line(r) for r in [self.header, *self.rows])

    __repr__ = __str__
