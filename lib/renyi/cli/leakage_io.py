"""Files of ``python -m renyi design``: leakage matrices and priors in, channels out.

Every reader fails with a :class:`DesignError` whose one line names the option and the file;
:func:`write_channel` replaces its target atomically and :func:`check_output` refuses, before
any work, a target that would overwrite an input or cannot be written.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import numpy as np

__all__ = ["DesignError", "load_leakage", "load_prior", "build_model", "write_channel", "check_output", "SUM_TOLERANCE"]

#: Column sums and prior sums may be off by this much (decimal files); they are then renormalised.
SUM_TOLERANCE = 1e-9


class DesignError(ValueError):
    """A user error of the design command: one line, status 1."""


def _read_table(path: str, name: str) -> np.ndarray:
    file = Path(path)
    if not file.exists():
        raise DesignError(f"{name}: no such file: {path}")
    if file.is_dir():
        raise DesignError(f"{name}: is a directory: {path}")
    try:
        if file.suffix == ".npy":
            with open(file, "rb") as fh:
                if fh.read(6) != b"\x93NUMPY":
                    raise DesignError(
                        f"{name}: {path} is not a .npy file (it has no NumPy header); "
                        "if it holds text, give it a .csv or .txt name"
                    )
            table = np.load(file, allow_pickle=False)
        elif file.suffix == ".json":
            data = json.loads(file.read_text())
            if isinstance(data, dict):
                if len(data) != 1:
                    raise DesignError(f"{name}: {path} must hold one array (a list of rows), found keys {sorted(data)}")
                data = next(iter(data.values()))
            table = np.array(data, dtype=float)
        else:
            table = _parse_rows(file.read_text(), path, name)
    except DesignError:
        raise
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise DesignError(f"{name}: cannot read {path}: {exc}") from None
    if table.dtype.kind not in "biuf":
        raise DesignError(f"{name}: {path} holds {table.dtype} values; expected numbers")
    table = np.asarray(table, dtype=float)
    if not np.all(np.isfinite(table)):
        raise DesignError(f"{name}: {path} contains NaN or infinite values")
    return table


def _parse_rows(text: str, path: str, name: str) -> np.ndarray:
    """Rows of numbers separated by commas or whitespace; the first bad line is named."""
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].replace(",", " ").split()
        if not fields:
            continue
        try:
            rows.append([float(v) for v in fields])
        except ValueError:
            bad = next(v for v in fields if not _is_number(v))
            hint = (
                "; decimal commas? write decimal points (0.85), with values separated by commas or spaces"
                if ";" in line
                else ""
            )
            raise DesignError(f"{name}: {path}, line {lineno}: not a number: {bad!r}{hint}") from None
        if len(rows[-1]) != len(rows[0]):
            raise DesignError(
                f"{name}: {path}, line {lineno}: {len(rows[-1])} values, but the first row has {len(rows[0])}"
            )
    if not rows:
        raise DesignError(f"{name}: {path} holds no numbers")
    return np.array(rows, dtype=float)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def load_leakage(path: str, *, transpose: bool = False) -> np.ndarray:
    """The leakage matrix A = P_{X|Y} from a file: rows x, columns y, each column a distribution.

    Parameters
    ----------
    path : str
    transpose : bool, default False

    Returns
    -------
    ndarray, shape (n_x, n_y)
    """
    a = _read_table(path, "--leakage")
    if a.ndim != 2 or min(a.shape) < 2:
        raise DesignError(f"--leakage: expected a matrix with at least 2 rows and 2 columns, got shape {a.shape}")
    if transpose:
        a = a.T
    if np.any(a < 0):
        raise DesignError("--leakage: entries must be probabilities (>= 0)")
    sums = a.sum(axis=0)
    bad = np.flatnonzero(np.abs(sums - 1) > SUM_TOLERANCE)
    if bad.size:
        hint = ""
        if np.all(np.abs(a.sum(axis=1) - 1) <= SUM_TOLERANCE):
            hint = "; its rows sum to 1, so it looks transposed: pass --transpose"
        raise DesignError(
            f"--leakage: column y={bad[0]} sums to {sums[bad[0]]:.12g}; each column must be "
            f"the distribution P_{{X|Y=y}} (rows x, columns y){hint}"
        )
    return a / sums


def load_prior(text: str, option: str) -> np.ndarray:
    """A prior given inline ('0.2,0.3,0.5') or as a file.

    Parameters
    ----------
    text : str
        Comma-separated probabilities, or a file name.
    option : str
        The option's name, for messages.

    Returns
    -------
    ndarray
    """
    try:
        prior = np.array([float(v) for v in text.replace(";", ",").split(",") if v.strip()])
    except ValueError:
        prior = _read_table(text, option)
    prior = np.ravel(prior)
    if prior.size < 2:
        raise DesignError(f"{option}: expected at least 2 probabilities, got {prior.size}")
    if not np.all(np.isfinite(prior)) or np.any(prior <= 0):
        raise DesignError(f"{option}: every probability must be > 0 (a zero-probability symbol can be dropped)")
    total = float(prior.sum())
    if abs(total - 1) > SUM_TOLERANCE:
        raise DesignError(f"{option}: the probabilities sum to {total:.12g}, not 1")
    return prior / total


def build_model(a, prior, prior_of):
    """A LeakageModel when Theorem 1 applies (square, invertible A), else a GeneralLeakageModel.

    Parameters
    ----------
    a : ndarray
        The leakage matrix.
    prior : ndarray
    prior_of : {"x", "y"}

    Returns
    -------
    LeakageModel or GeneralLeakageModel
    """
    from ..lift import GeneralLeakageModel, LeakageModel

    n_x, n_y = a.shape
    expected = n_x if prior_of == "x" else n_y
    if prior.size != expected:
        raise DesignError(
            f"--prior: has {prior.size} entries, but the leakage matrix has {expected} "
            f"{'rows (values of X)' if prior_of == 'x' else 'columns (values of Y)'}"
        )
    square = n_x == n_y and np.linalg.cond(a) < 1e12
    if prior_of == "x":
        if not square:
            raise DesignError(
                "--prior: with a non-square or singular leakage matrix, P_Y is not determined "
                "by P_X; give the prior of Y with --prior-of y"
            )
        try:
            return LeakageModel.from_leakage(a, p_x=prior)
        except ValueError as exc:
            raise DesignError(f"--prior: {exc}") from None
    if square:
        p_x = a @ prior
        return LeakageModel(p_x / p_x.sum(), a)
    return GeneralLeakageModel.from_leakage(a, p_y=prior)


def write_channel(path: str, channel: np.ndarray, header: str) -> None:
    """Write the channel P_(U|Y) to a file, rows u and columns y.

    Parameters
    ----------
    path : str
        ``.csv``/``.txt`` (17 significant digits, with a header) or ``.npy``.
    channel : ndarray
    header : str

    Returns
    -------
    None
    """
    file = Path(path)
    if file.suffix not in (".npy", ".csv", ".txt"):
        raise DesignError(f"--out: unknown format {file.suffix!r}; use .csv, .txt or .npy")
    # Written beside the target and moved over it: an interrupted run leaves the old file whole.
    tmp = file.with_name(f".{file.name}.{os.getpid()}.tmp{file.suffix}")
    try:
        if file.suffix == ".npy":
            np.save(tmp, channel)
        else:
            # 17 significant digits: the file holds exactly the channel that was checked.
            np.savetxt(tmp, channel, delimiter=",", fmt="%.17g", header=header)
        os.replace(tmp, file)
    except OSError as exc:
        raise DesignError(f"--out: cannot write {path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def check_output(path: str, inputs) -> None:
    """Refuse an ``--out`` that cannot be written, before any work is done.

    Parameters
    ----------
    path : str
        The ``--out`` path.
    inputs : sequence of str
        The paths of the command's input files, which ``--out`` must not name.

    Returns
    -------
    None
    """
    file = Path(path)
    if file.is_dir():
        raise DesignError(f"--out: is a directory: {path}")
    if file.suffix not in (".npy", ".csv", ".txt"):
        raise DesignError(f"--out: unknown format {file.suffix!r}; use .csv, .txt or .npy")
    for source in inputs:
        if file.exists() and Path(source).exists() and os.path.samefile(file, source):
            raise DesignError(f"--out: {path} is one of the inputs; write the channel to another file")
    folder = file.parent if str(file.parent) else Path(".")
    if not folder.is_dir():
        raise DesignError(f"--out: no such folder: {folder}")
    if not os.access(folder, os.W_OK) or (file.exists() and not os.access(file, os.W_OK)):
        raise DesignError(f"--out: {path} is not writable")
