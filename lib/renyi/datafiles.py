"""The shipped data's file format and provenance: CSV rows written bit-exactly and atomically,
read back into Python numbers, with the hashes, commit and versions the manifests record.

Used by :mod:`renyi.experiments` (the Part I sweeps) and ``renyi.libraries`` (the audits of
diffprivlib and OpenDP); the rules of ``data/README.md`` are implemented here once.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import platform
import subprocess
from pathlib import Path

import numpy as np

__all__ = ["read_rows", "write_rows", "file_sha256", "git_output", "versions"]

_TEXT_FIELDS = ("mechanism", "direction", "direction_both")
_INT_FIELDS = ("n", "replicate", "reliable")


def _fmt(value):
    if isinstance(value, float):
        return repr(float(value))  # shortest repr that round-trips: bit-exact storage
    return "" if value is None else str(value)


def write_rows(path: Path, fields, rows) -> str:
    """Write rows as CSV atomically (an interrupted run never leaves half a file).

    Parameters
    ----------
    path : Path
    fields : sequence of str
        The columns, in order.
    rows : iterable of dict
        Floats are stored as their shortest round-tripping ``repr``; ``None`` as empty.

    Returns
    -------
    str
        The sha256 of the bytes written.
    """
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(fields)
    for row in rows:
        writer.writerow([_fmt(row[f]) for f in fields])
    data = buf.getvalue().encode()
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return hashlib.sha256(data).hexdigest()


def _parse(key, value):
    if key in _TEXT_FIELDS:
        return value
    if value == "":
        return None
    return int(value) if key in _INT_FIELDS else float(value)


def read_rows(path) -> list[dict]:
    """Read a sweep CSV back into dicts of Python numbers (and strings for names).

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    list of dict
    """
    with open(path, newline="") as fh:
        return [{k: _parse(k, v) for k, v in row.items()} for row in csv.DictReader(fh)]


def file_sha256(path: Path) -> str:
    """The sha256 of a file, as the manifests record it.

    Parameters
    ----------
    path : Path

    Returns
    -------
    str
    """
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def git_output(*args) -> str:
    """The output of ``git args...`` in the library's folder, or ``""`` outside a checkout.

    Parameters
    ----------
    *args : str

    Returns
    -------
    str
    """
    try:
        return subprocess.run(
            ["git", *args], capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parent
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def versions() -> dict:
    """Python, the numerical stack, renyi and the platform, as recorded in the manifests.

    Returns
    -------
    dict
    """
    import scipy
    import statsmodels

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "statsmodels": statsmodels.__version__,
        "renyi": __import__("renyi").__version__,
        "platform": platform.platform(),
    }
