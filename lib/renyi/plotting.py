"""The one figure style of the book.

Chapters call :func:`use_style` once and create figures with
:func:`figure`.  Fixing ``figsize`` and ``dpi`` here matters beyond looks:
nbval compares the ``text/plain`` repr of every figure
(``<Figure size 640x400 with 1 Axes>``), which changes with the defaults of
matplotlib-inline unless the size is set explicitly.
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

__all__ = ["STYLE", "PALETTE", "use_style", "figure", "save", "ternary", "simplex_axes"]

#: Colour-blind-safe palette (Okabe–Ito), in the order curves are drawn.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]

STYLE = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": mpl.cycler(color=PALETTE),
    "legend.frameon": False,
    "lines.linewidth": 1.6,
    "svg.hashsalt": "renyi-compendium",
}


def use_style() -> None:
    """Apply the book's rcParams to the current matplotlib session.

    Returns
    -------
    None
    """
    mpl.rcParams.update(STYLE)


def figure(ncols: int = 1, nrows: int = 1, *, width: float = 6.4, height: float = 4.0, **kwargs):
    """``plt.subplots`` with the book's size conventions; returns ``(fig, axes)``.

    Parameters
    ----------
    ncols, nrows : int, default 1
    width, height : float
        Figure size in inches.
    **kwargs
        Passed to ``matplotlib.pyplot.subplots``.

    Returns
    -------
    fig, axes
    """
    with mpl.rc_context(STYLE):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), layout="constrained", **kwargs)
    return fig, axes


def save(fig, path) -> None:
    """Save without embedded dates or versions, so identical figures are identical files.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : str or Path

    Returns
    -------
    None
    """
    fig.savefig(path, metadata={"Software": None} if str(path).endswith(".png") else {"CreationDate": None})


def ternary(points):
    r"""Barycentric coordinates of 3-point pmfs as points of an equilateral triangle.

    Parameters
    ----------
    points : array_like, shape (3,) or (3, m)
        Pmfs on three letters, one per column.

    Returns
    -------
    x, y : float or ndarray
        Corners: letter 1 at (0, 0), letter 2 at (1, 0), letter 3 at (1/2, √3/2).

    Examples
    --------
    >>> from renyi.plotting import ternary
    >>> [round(float(v), 3) for v in ternary([1 / 3, 1 / 3, 1 / 3])]
    [0.5, 0.289]
    """
    p = np.asarray(points, dtype=float)
    if p.shape[0] != 3:
        raise ValueError(f"points must have 3 rows (one per letter), got shape {p.shape}")
    return p[1] + 0.5 * p[2], (3**0.5 / 2) * p[2]


def simplex_axes(ax, labels=("1", "2", "3")) -> None:
    """Draw the probability triangle of :func:`ternary` on ``ax``, with its corner labels.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    labels : three str, or None
        Names of the letters at the corners; None for none (a plot zoomed away from the
        corners, where the labels would fall outside the axes).

    Returns
    -------
    None
    """
    corners = np.eye(3)
    x, y = ternary(np.concatenate([corners, corners[:, :1]], axis=1))
    ax.plot(x, y, color="0.3", lw=1)
    offsets = ((-0.04, -0.05), (0.04, -0.05), (0.0, 0.03))
    for (cx, cy), (dx, dy), text in zip(zip(*ternary(corners)), offsets, labels or ()):
        ax.text(cx + dx, cy + dy, text, ha="center", va="center")
    ax.set_aspect("equal")
    ax.axis("off")
