"""Reading mechanism outputs from files for the command line (``python -m renyi audit``).

``.npy`` files are memory-mapped and never unpickled; text and CSV hold one value (or one
row of a vector outcome) per line.  Every malformed input raises :class:`UserError` with
one line that names the file and, for text, the offending line, so that the command line
exits with a message rather than a traceback.
"""

from __future__ import annotations

import gzip
import io
import itertools
import math
import os
import re
import stat
import sys
import zipfile
import zlib
from pathlib import Path

import numpy as np

__all__ = ["UserError", "load_samples"]


class UserError(Exception):
    """An error in what the user asked for: reported in one line, no traceback."""


_NPY_MAGIC = b"\x93NUMPY"
_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGIC = b"PK\x03\x04"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF8_BOM = b"\xef\xbb\xbf"
_FLOAT_CHARS = frozenset(".eEnNiI")  # a decimal point, an exponent, nan or inf
_MAX_INT_DIGITS = 18  # every integer of up to 18 digits fits int64


def load_samples(path: str, name: str, *, decimal_comma: bool = False) -> np.ndarray:
    """Load outputs from ``.npy`` (memory-mapped, no pickles), or text/CSV with one value or row per line.

    Every input is opened exactly once.  A regular ``.npy`` file is memory-mapped from that
    handle; anything else (standard input, a pipe, ``<(...)`` process substitution, a FIFO) is
    read whole from it, so no byte is consumed by a probe and lost.  What is read is
    recognised by its first bytes: a NumPy header, gzip (decompressed, then recognised
    again), a ``.npz`` archive holding one array, or text in UTF-8 (with or without a byte
    order mark) or UTF-16 (with one).

    Parameters
    ----------
    path : str
        The file, or ``"-"`` for standard input.
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
        stream = getattr(sys.stdin, "buffer", None)
        try:
            data = stream.read() if stream is not None else sys.stdin.read().encode()
        except OSError as exc:
            raise UserError(f"{name}: cannot read standard input: {exc.strerror or exc}") from None
        return _from_bytes(data, "standard input", name, suffix="", decimal_comma=decimal_comma)
    file = Path(path)
    if not file.exists():
        raise UserError(f"{name}: no such file: {path}")
    if file.is_dir():
        raise UserError(f"{name}: is a directory: {path}")
    try:
        with open(file, "rb") as fh:
            if stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                if fh.read(len(_NPY_MAGIC)) == _NPY_MAGIC:
                    fh.seek(0)
                    return _map_npy(fh, path, name)
                fh.seek(0)
            data = fh.read()
    except OSError as exc:
        raise UserError(f"{name}: cannot read {path}: {exc.strerror or exc}") from None
    return _from_bytes(data, path, name, suffix=file.suffix.lower(), decimal_comma=decimal_comma)


def _from_bytes(data: bytes, source: str, name: str, *, suffix: str, decimal_comma: bool) -> np.ndarray:
    """Recognise what ``data`` holds by its first bytes and read it."""
    if not data:
        raise UserError(f"{name}: {source} is empty (no values)")
    if data.startswith(_NPY_MAGIC):
        return _checked(_read_npy(io.BytesIO(data), source, name), source, name)
    if data.startswith(_GZIP_MAGIC):
        try:
            inner = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise UserError(f"{name}: {source} looks gzip-compressed but cannot be decompressed: {exc}") from None
        return _from_bytes(inner, source, name, suffix=suffix.removesuffix(".gz"), decimal_comma=decimal_comma)
    if data.startswith(_ZIP_MAGIC):
        return _read_npz(data, source, name)
    if suffix == ".npy":
        raise UserError(
            f"{name}: {source} is not a .npy file (it has no NumPy header); "
            "if it holds text, give it a .txt or .csv name"
        )
    if data.startswith(_UTF8_BOM):
        codec = "utf-8-sig"
    elif data.startswith(_UTF16_BOMS):
        codec = "utf-16"
    else:
        codec = "utf-8"
    try:
        text = data.decode(codec)
    except UnicodeDecodeError:
        raise UserError(
            f"{name}: {source} is neither text (UTF-8, or UTF-16 with a byte order mark) nor a "
            ".npy, .npz or gzip file; save the outputs with numpy.save or as one number per line"
        ) from None
    del data
    return _parse_text(text, source, decimal_comma=decimal_comma)


def _map_npy(fh, source: str, name: str) -> np.ndarray:
    """Memory-map a regular ``.npy`` file from its open handle: 10^8 values are never copied first."""
    try:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:  # a newer header: read it whole, through the same handle
            fh.seek(0)
            return _checked(_read_npy(fh, source, name), source, name)
    except ValueError as exc:
        raise UserError(f"{name}: cannot read {source} as .npy: {exc}") from None
    if dtype.hasobject:
        raise _pickled(source, name)
    if dtype.kind not in "biuf":
        raise UserError(f"{name}: {source} holds {dtype} values; expected real numbers or integers")
    if math.prod(shape) == 0:
        raise UserError(f"{name}: {source} is empty")
    try:
        arr = np.memmap(fh, dtype=dtype, mode="r", offset=fh.tell(), shape=shape, order="F" if fortran else "C")
    except (ValueError, OSError) as exc:  # a truncated file
        raise UserError(f"{name}: cannot read {source} as .npy: {exc}") from None
    return np.asarray(arr) if arr.ndim else arr


def _read_npy(fh, source: str, name: str) -> np.ndarray:
    try:
        return np.load(fh, allow_pickle=False)
    except ValueError as exc:
        text = str(exc).lower()
        if "pickle" in text or "object" in text:
            raise _pickled(source, name) from None
        raise UserError(f"{name}: cannot read {source} as .npy: {exc}") from None
    except (OSError, EOFError) as exc:
        raise UserError(f"{name}: cannot read {source} as .npy: {exc}") from None


def _read_npz(data: bytes, source: str, name: str) -> np.ndarray:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            keys = list(archive.files)
            if len(keys) != 1:
                raise UserError(
                    f"{name}: {source} is a .npz archive of {len(keys)} arrays ({', '.join(keys[:5]) or 'none'}); "
                    "save one array per file with numpy.save"
                )
            arr = archive[keys[0]]
    except UserError:
        raise
    except ValueError as exc:
        if "pickle" in str(exc).lower() or "object" in str(exc).lower():
            raise _pickled(source, name) from None
        raise UserError(f"{name}: cannot read {source} as .npz: {exc}") from None
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise UserError(f"{name}: {source} starts like a zip archive but is not a readable .npz: {exc}") from None
    return _checked(arr, source, name)


def _checked(arr: np.ndarray, source: str, name: str) -> np.ndarray:
    if arr.dtype.hasobject:
        raise _pickled(source, name)
    if arr.size == 0:
        raise UserError(f"{name}: {source} is empty")
    if arr.dtype.kind not in "biuf":
        raise UserError(f"{name}: {source} holds {arr.dtype} values; expected real numbers or integers")
    return arr


def _pickled(source: str, name: str) -> UserError:
    return UserError(
        f"{name}: {source} holds Python objects, which are refused for safety (no "
        "pickles); save a plain numeric array with numpy.save"
    )


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
        arr = _parse_lines(_content_lines(flat), width, source, float if is_float else int)
        n_lines = arr.size // width
    return arr if width == 1 else arr.reshape(n_lines, width)


def _parse_lines(lines, width, source, kind) -> np.ndarray:
    """The slow path, line by line with Python's own ``float``/``int``.

    It reads what numpy's C parser does not (``1_000``, digits of other scripts, as Python
    reads them) and names the first line that is not ``width`` numbers.
    """
    values = []
    for lineno, line in enumerate(lines, 1):
        fields = line.split()
        if len(fields) != width:
            raise UserError(f"{source}, value line {lineno}: expected {width} value(s), found {len(fields)}")
        for field in fields:
            try:
                values.append(kind(field))
            except ValueError:
                raise UserError(f"{source}, value line {lineno}: not a number: {field!r}") from None
    try:
        return np.array(values, dtype=float if kind is float else np.int64)
    except OverflowError:
        raise UserError(
            f"{source}: an integer does not fit a 64-bit integer; write such outcomes as smaller codes"
        ) from None
