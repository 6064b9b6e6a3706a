"""The one figure style of the book.

Chapters call :func:`use_style` once and create figures with
:func:`figure`.  Fixing ``figsize`` and ``dpi`` here matters beyond looks:
nbval compares the ``text/plain`` repr of every figure
(``<Figure size 640x400 with 1 Axes>``), which changes with the defaults of
matplotlib-inline unless the size is set explicitly.

A figure is drawn at its own size on a desktop, and scaled down to the column
on a phone.  :func:`legible` enlarges every text that would be smaller than
:data:`MIN_TEXT_PX` CSS pixels in a column of :data:`PHONE_COLUMN_PX`, and the
PNG renderer that :func:`use_style` installs in a notebook applies it to every
figure and records the smallest text size in the PNG (:data:`TEXT_KEY`), where
the book's browser test reads it.
"""

from __future__ import annotations

import importlib
from binascii import b2a_base64
from io import BytesIO

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.text import Text

__all__ = [
    "STYLE",
    "PALETTE",
    "PHONE_COLUMN_PX",
    "MIN_TEXT_PX",
    "TEXT_KEY",
    "use_style",
    "legible",
    "png",
    "figure",
    "save",
    "ternary",
    "simplex_axes",
    "annotated_map",
    "ticks_across",
    "simplex_inset",
    "theorem1_band",
]

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


#: Width in CSS pixels that the book's theme gives a figure on a 412-px phone (the browser
#: test measures 355 px for a figure scaled to the column; a few pixels of margin).
PHONE_COLUMN_PX = 350
#: The smallest text a reader should meet on that phone, in CSS pixels.
MIN_TEXT_PX = 9.0
#: The PNG text chunk that records a figure's smallest text, in pixels of the image.
TEXT_KEY = "Smallest text px"


def use_style() -> None:
    """Apply the book's rcParams, and in a notebook render figures through :func:`png`.

    Returns
    -------
    None
    """
    mpl.rcParams.update(STYLE)
    try:
        from IPython import get_ipython
    except ImportError:  # no IPython: a script, where figures are saved by hand
        return
    shell = get_ipython()
    if shell is None:
        return
    backend = str(mpl.rcParams["backend"])
    if backend.startswith("module://"):
        # matplotlib-inline installs its own PNG renderer when its module is first imported,
        # which matplotlib otherwise defers to the first figure: import it first
        importlib.import_module(backend.removeprefix("module://"))
    shell.display_formatter.formatters["image/png"].for_type(Figure, png)


def _texts(fig) -> list:
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def legible(fig, column_px: float = PHONE_COLUMN_PX, min_px: float = MIN_TEXT_PX) -> float:
    """Enlarge every text of ``fig`` that a reader would see below ``min_px`` on a phone.

    The figure is drawn at ``fig.dpi`` and cropped to its content, as the notebook shows it;
    a page narrower than the image scales it to ``column_px``, and text scales with it.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    column_px : float
        Width of the column the image is scaled to, in CSS pixels.
    min_px : float
        The smallest text size wanted at that width, in CSS pixels.

    Returns
    -------
    float
        The smallest text size of the figure afterwards, in pixels of the image.
    """
    for _ in range(3):  # larger text can widen the cropped image a little: settle it
        fig.canvas.draw()
        # the cropped image: the content's box plus the saved padding on both sides
        width_px = (fig.get_tightbbox().width + 2 * mpl.rcParams["savefig.pad_inches"]) * fig.dpi
        scale = min(1.0, column_px / width_px)
        least_pt = min_px / scale * 72 / fig.dpi
        small = [t for t in _texts(fig) if t.get_fontsize() < least_pt - 1e-9]
        if not small:
            break
        for text in small:
            text.set_fontsize(least_pt)
    return min((t.get_fontsize() for t in _texts(fig)), default=0.0) * fig.dpi / 72


def png(fig) -> str | None:
    """The notebook's PNG of ``fig`` (base64), legible on a phone and with its smallest text.

    Parameters
    ----------
    fig : matplotlib.figure.Figure

    Returns
    -------
    str or None
        None for a figure without axes, as IPython's own renderer.
    """
    if not fig.axes:
        return None
    smallest = legible(fig)
    buffer = BytesIO()
    fig.canvas.print_figure(
        buffer,
        format="png",
        facecolor=fig.get_facecolor(),
        edgecolor=fig.get_edgecolor(),
        dpi=fig.dpi,
        bbox_inches="tight",
        metadata={"Software": None, TEXT_KEY: f"{smallest:.2f}"},
    )
    return b2a_base64(buffer.getvalue(), newline=False).decode("ascii")


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


def annotated_map(ax, values, flagged, xticks, yticks, *, vmax=1.2, flag="*", dark_below=0.7):
    """A colour map of ``values`` with each cell's number written in it.

    Cells where ``flagged`` is true get ``flag`` after their number, in bold (the tuning
    chapter flags cells whose coverage falls below 0.90).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    values, flagged : ndarray, shape (rows, columns)
        The numbers (clipped to ``[0, vmax]`` for the colour) and which cells to flag.
    xticks, yticks : sequence of float
        Labels of the columns and the rows.
    vmax : float, default 1.2
        Top of the colour scale.
    flag : str, default "*"
        Mark of a flagged cell.
    dark_below : float, default 0.7
        Numbers on cells below this are written in white (the map is dark there).

    Returns
    -------
    matplotlib.image.AxesImage
        For a colour bar.
    """
    image = ax.imshow(np.clip(values, 0, vmax), origin="lower", cmap="viridis", vmin=0, vmax=vmax, aspect="auto")
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            ax.text(
                j,
                i,
                f"{values[i, j]:.2f}" + (flag if flagged[i, j] else ""),
                ha="center",
                va="center",
                fontsize=8,
                color="white" if values[i, j] < dark_below else "black",
                fontweight="bold" if flagged[i, j] else "normal",
            )
    ax.grid(False)
    ax.set_xticks(range(len(xticks)), [f"{v:g}" for v in xticks])
    ax.set_yticks(range(len(yticks)), [f"{v:g}" for v in yticks])
    return image


def ticks_across(ax, centre, direction, radii, labels, *, length, shrink=0.06):
    """Mark ``centre ± r * direction`` on a simplex plot with a short tick across the direction.

    Radii a few per cent apart would hide each other as markers; ticks of decreasing length
    and their own colour stay apart.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes of :func:`simplex_axes`.
    centre, direction : ndarray, shape (3,)
        A pmf and a direction in the simplex's plane.
    radii : sequence of float
        One tick pair per radius, in colours ``PALETTE[0]``, ``PALETTE[1]``, ...
    labels : sequence of str
        Legend entries, one per radius.
    length : float
        Half-length of the first tick as a share of the distance from ``centre`` to the
        point at ``radii[-1]``; each further tick is ``shrink`` shorter.
    shrink : float, default 0.06

    Returns
    -------
    None
    """
    end = np.array(ternary(centre + radii[-1] * direction))
    start = np.array(ternary(centre))
    across = np.array([-(end - start)[1], (end - start)[0]]) / np.linalg.norm(end - start)
    for k, (radius, label) in enumerate(zip(radii, labels)):
        half = (length - shrink * k) * np.linalg.norm(end - start) * across
        for sign in (1, -1):
            at = np.array(ternary(centre + sign * radius * direction))
            tick = np.stack([at - half, at + half], axis=1)
            _ = ax.plot(*tick, color=PALETTE[k], lw=2, label=label if sign > 0 else None)


def simplex_inset(ax, point, box, *, where=(0.02, 0.72, 0.26, 0.26)):
    """An inset with the whole simplex, ``point`` starred and the zoomed view ``box`` framed.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The zoomed simplex plot.
    point : ndarray, shape (3,)
        A pmf to mark (e.g. :math:`P_Y`).
    box : tuple of float
        ``(x0, x1, y0, y1)``, the zoomed view's limits.
    where : tuple of float
        The inset's position in axes coordinates.

    Returns
    -------
    matplotlib.axes.Axes
        The inset.
    """
    whole = ax.inset_axes(list(where))
    simplex_axes(whole, labels=None)
    _ = whole.plot(*ternary(point), "k*", ms=5)
    _ = whole.add_patch(plt.Rectangle(box[::2], box[1] - box[0], box[3] - box[2], fill=False, color="C3", lw=1))
    return whole


def theorem1_band(ax, budgets, certificates):
    r"""Shade Theorem 1's band :math:`[V_-, V_+]` over the budgets where it holds.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    budgets : ndarray
        The budgets :math:`\epsilon` of ``certificates`` (those within :math:`\epsilon_{\max}`).
    certificates : sequence of Certificate
        :func:`renyi.lift.certificate` at those budgets.

    Returns
    -------
    None
    """
    ax.fill_between(
        budgets,
        [c.V_minus for c in certificates],
        [c.V_plus for c in certificates],
        color="0.85",
        label=r"Theorem 1: $[V_-, V_+]$",
    )
