"""The shipped data's file format and provenance.

CSV rows written bit-exactly and atomically,
read back into Python numbers, with the hashes, commit and versions the manifests record.

Used by :mod:`renyi.sweeps` (the Part I sweeps) and ``renyi.sweeps.libraries`` (the audits of
diffprivlib and OpenDP); the rules of ``data/README.md`` are implemented here once.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import hashlib
import io
import json
import os
import platform
import subprocess
from pathlib import Path

import numpy as np

__all__ = [
    "read_rows",
    "write_rows",
    "file_sha256",
    "git_output",
    "versions",
    "ManifestError",
    "read_manifest",
    "check_target",
    "update_manifest",
]

_TEXT_FIELDS = ("mechanism", "direction", "direction_both", "kind")
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
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # one per process: runs never share it
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


class ManifestError(RuntimeError):
    """A manifest that cannot be read, or a run that would overwrite data it does not describe."""


def read_manifest(path: Path) -> dict:
    """The manifest at ``path`` (``{"files": {}}`` when there is none), or one line naming what is wrong.

    Parameters
    ----------
    path : Path
        ``data/MANIFEST.json``.

    Returns
    -------
    dict
        With a ``"files"`` object mapping paths relative to the data folder to their entries.

    Raises
    ------
    ManifestError
        When the file is not JSON, not an object, or has no ``"files"`` object.
    """
    path = Path(path)
    if not path.exists():
        return {"files": {}}
    try:
        manifest = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{path} is not valid JSON ({exc.msg}, line {exc.lineno}); repair or remove it") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path} cannot be read: {exc}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise ManifestError(f'{path} is not a manifest: expected a JSON object with a "files" object')
    return manifest


def check_target(out: Path, relative: str, manifest: dict, parameters=None) -> None:
    """Refuse to overwrite ``out/relative`` unless the manifest describes it exactly.

    A file that exists is replaced only when the manifest has an entry for it whose sha256
    matches the file and, when ``parameters`` is given, whose parameters equal them: a file
    the manifest does not describe (no manifest, no entry, an edited file) may be results
    nobody can recompute, and a run with other parameters would replace them silently.

    Parameters
    ----------
    out : Path
        The data folder.
    relative : str
        The file, relative to ``out`` (``"part1/section4.csv"``).
    manifest : dict
        From :func:`read_manifest`.
    parameters : dict, optional
        The parameters of the run that would write the file.

    Returns
    -------
    None

    Raises
    ------
    ManifestError
        Naming the file and what to do (another folder, or ``--force``).
    """
    target = Path(out) / relative
    if not target.exists():
        return
    entry = manifest["files"].get(relative)
    fix = "write to another --out, or pass --force (make data FORCE=1) to replace it"
    if not isinstance(entry, dict):
        raise ManifestError(f"{target} exists but {Path(out) / 'MANIFEST.json'} has no entry for it; {fix}")
    if entry.get("sha256") != file_sha256(target):
        raise ManifestError(f"{target} does not match its manifest entry (sha256 differs: edited?); {fix}")
    if parameters is not None and entry.get("parameters") != parameters:
        raise ManifestError(f"{target} holds results with other parameters than this run; {fix}")


def update_manifest(out: Path, entries: dict, *, description: str | None = None) -> list[str]:
    """Merge ``entries`` into ``out/MANIFEST.json`` under a lock, written atomically.

    Two runs that finish together both land: each re-reads the manifest while it holds an
    exclusive lock on ``MANIFEST.json.lock`` and replaces the file through a temporary one.
    Every other entry is checked against its file; one that no longer matches is kept but
    marked (``"mismatch"``) and reported.

    Parameters
    ----------
    out : Path
        The data folder.
    entries : dict
        Relative path -> manifest entry.
    description : str, optional
        The manifest's description.

    Returns
    -------
    list of str
        One line per entry that does not match its file.
    """
    out = Path(out)
    path = out / "MANIFEST.json"
    with open(out / "MANIFEST.json.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        manifest = read_manifest(path)
        manifest["files"].update(entries)
        if description is not None:
            manifest["description"] = description
        problems = []
        for relative, entry in sorted(manifest["files"].items()):
            if relative in entries or not isinstance(entry, dict):
                continue
            file = out / relative
            actual = file_sha256(file) if file.exists() else None
            if actual != entry.get("sha256"):
                entry["mismatch"] = "the file is missing" if actual is None else f"the file's sha256 is {actual}"
                problems.append(f"{path}: the entry for {relative} does not match its file ({entry['mismatch']})")
            else:
                entry.pop("mismatch", None)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
    return problems
