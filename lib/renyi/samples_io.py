"""Reading mechanism outputs from files for the command line (``python -m renyi audit``).

``.npy`` files are memory-mapped and never unpickled; text and CSV hold one value (or one
row of a vector outcome) per line.  Every malformed input raises :class:`UserError` with
one line that names the file and, for text, the offending line, so that the command line
exits with a message rather than a traceback.
"""

from __future__ import annotations

import io
import itertools
import re
import sys
from pathlib import Path

import numpy as np

__all__ = ["UserError", "load_samples"]


class UserError(Exception):
    """An error in what the user asked for: reported in one line, no traceback."""


_NPY_MAGIC = b"\x93NUMPY"
_FLOAT_CHARS = frozenset(".eEnNiI")  # a decimal point, an exponent, nan or inf
_MAX_INT_DIGITS = 18  # every integer of up to 18 digits fits int64


def load_samples(path: str, name: str, *, decimal_comma: bool = False) -> np.ndarray:
    """Load outputs from ``.npy`` (memory-mapped, no pickles), or text/CSV with one value or row per line.

    Parameters
    ----------
    path : str
        The file, or ``"-"`` for standard input (text).
    name : str
        How the error messages call it (``"P"``, ``"Q"``, ``"--claim-curve"``).
    decimal_comma : bool, default False
        Read ``0,5`` as 0.5 (the separator is then ``;`` or whitespace).

    Returns
    -------
    ndarray
        1-D values, or 2-D with one outcome per row; integers stay integers.

    Raises
    ------
    UserError
        For a missing, unreadable, pickled, empty or malformed file, naming the line.
    """
    if path == "-":
        return _parse_text(sys.stdin.read(), "standard input", decimal_comma=decimal_comma)
    file = Path(path)
    if not file.exists():
        raise UserError(f"{name}: no such file: {path}")
    if file.is_dir():
        raise UserError(f"{name}: is a directory: {path}")
    try:
        with open(file, "rb") as fh:
            head = fh.read(len(_NPY_MAGIC))
    except OSError as exc:
        raise UserError(f"{name}: cannot read {path}: {exc.strerror or exc}") from None
    if head == _NPY_MAGIC:
        return _load_npy(file, name)
    if file.suffix == ".npy":
        raise UserError(
            f"{name}: {path} is not a .npy file (it has no NumPy header); if it holds text, give it a .txt or .csv name"
        )
    try:
        text = file.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{name}: cannot read {path} as text: {exc}") from None
    return _parse_text(text, path, decimal_comma=decimal_comma)


def _load_npy(file: Path, name: str) -> np.ndarray:
    try:
        # Memory-mapped: a 10^8-value file is read as the estimator needs it, not copied first.
        arr = np.load(file, mmap_mode="r", allow_pickle=False)
    except ValueError as exc:
        text = str(exc).lower()
        if "pickle" in text or "python objects" in text or "object" in text:
            raise UserError(
                f"{name}: {file} holds Python objects, which are refused for safety (no "
                "pickles); save a plain numeric array with numpy.save"
            ) from None
        raise UserError(f"{name}: cannot read {file} as .npy: {exc}") from None
    except OSError as exc:
        raise UserError(f"{name}: cannot read {file}: {exc}") from None
    if arr.size == 0:
        raise UserError(f"{name}: {file} is empty")
    if arr.dtype.kind not in "biuf":
        raise UserError(f"{name}: {file} holds {arr.dtype} values; expected real numbers or integers")
    return arr


def _looks_decimal_comma(lines) -> bool:
    """Every line is 'digits,digits' and many fractions have a leading zero: '1,628', '0,05'."""
    sample = lines[:200]
    if not sample or any(line.count(",") != 1 or " " in line or ";" in line for line in sample):
        return False
    parts = [line.split(",") for line in sample]
    if not all(a.lstrip("+-").isdigit() and b.isdigit() for a, b in parts):
        return False
    leading_zero = sum(len(b) > 1 and b[0] == "0" for _, b in parts)
    return leading_zero >= max(2, len(parts) // 20)


def _content_lines(text: str):
    """The non-blank lines of ``text``, stripped, lazily (a 10^7-line file is never a list)."""
    return (line.strip() for line in io.StringIO(text) if line.strip())


def _parse_text(text: str, source: str, *, decimal_comma: bool = False) -> np.ndarray:
    if "#" in text:  # comments: the slow path, line by line
        text = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    head = list(itertools.islice(_content_lines(text), 200))
    if not head:
        raise UserError(f"{source} is empty (no values)")
    if decimal_comma:
        if "." in text:
            raise UserError(f"{source}: --decimal-comma given, but the file contains decimal points")
        text = text.replace(",", ".")
        head = [line.replace(",", ".") for line in head]
    elif "." not in text and _looks_decimal_comma(head):
        raise UserError(
            f"{source}: the values look like decimal commas ('{head[0]}' would be read as two "
            "integer columns); convert them to decimal points, or pass --decimal-comma"
        )
    table = str.maketrans(",;", "  ")
    width = len(head[0].translate(table).split())
    flat = text.translate(table)
    del text
    is_float = any(ch in _FLOAT_CHARS for ch in flat)
    if not is_float and any(len(tok.lstrip("+-")) > _MAX_INT_DIGITS for tok in flat.split() if len(tok) > 18):
        raise UserError(
            f"{source}: an integer has more than {_MAX_INT_DIGITS} digits and does not fit a "
            "64-bit integer; write such outcomes as smaller codes"
        )
    try:
        arr = np.fromstring(flat, dtype=float if is_float else np.int64, sep=" ")
    except ValueError:
        arr = None
    body = flat.strip()
    n_lines = body.count("\n") + 1  # C speed; blank lines are the rare case
    if re.search(r"\n[ \t\r\f\v]*\n", body):
        n_lines = sum(1 for _ in _content_lines(body))
    if arr is None or arr.size != n_lines * width:
        _report_bad_line(_content_lines(flat), table, width, source)
    return arr if width == 1 else arr.reshape(n_lines, width)


def _report_bad_line(lines, table, width, source):
    """The slow path, only to name the first bad line of a file that did not parse."""
    for lineno, line in enumerate(lines, 1):
        fields = line.translate(table).split()
        if len(fields) != width:
            raise UserError(f"{source}, value line {lineno}: expected {width} value(s), found {len(fields)}")
        for field in fields:
            if not _is_float(field):
                raise UserError(f"{source}, value line {lineno}: not a number: {field!r}")
    raise UserError(f"{source}: could not be read as numbers")


def _is_float(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False
