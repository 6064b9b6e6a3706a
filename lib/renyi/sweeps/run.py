r"""Simulation sweeps of Part I, written to ``data/part1/*.csv`` with a manifest.

Two sweeps reproduce and extend Section IV of Kutta, Askin and Dunsche (2024):

``section4``
    Every mechanism of :data:`renyi.mechanisms.MECHANISMS`, the pair (21),
    orders :math:`\lambda\in\{2,5,7\}`, :math:`n` on a log grid from
    :math:`10^3` to :math:`10^7` per side, :math:`R=100` replicates per point,
    library defaults for :math:`(h,\tau,\beta)`.
    Each row also holds eq. (16) exactly as printed on the same samples
    (``lower_eq16``), the paper-regime floor of :func:`renyi.audit.floor.paper_floor`
    with eq. (16) as printed (``lower_paper``, continuous outputs), and the
    default bound over both directions (``lower_both``).
``tuning``
    Gaussian and Laplace mechanisms at :math:`n\in\{10^4,10^6\}`: the bound on
    a grid of bandwidth and floor multipliers around the defaults, and of
    :math:`\beta\tau` values.
``orders``
    The order-range study: orders 1.01–64, :math:`n=10^2`–:math:`10^7`, for
    the Gaussian, Laplace and randomized-response mechanisms and for
    :math:`P=Q` (the ``*_p_eq_q`` cases, target 0); the default bound (both
    directions) with its reliability flag and the order actually used.
``floor_r``
    Randomized response and shuffled RR at :math:`n=10^4`–:math:`10^6`: the
    default bound for several values of the discrete floor constant
    :math:`r` of :func:`renyi.audit.floor.default_floor`.

Every task — one (sweep, case, n, block of replicates) — draws from its
own stream ``SeedSequence(ROOT_SEED, spawn_key=task.key)``, a function of the
task's identity only, so results do not depend on the number of workers or
the order in which tasks finish.  Finished tasks are kept in
``data/part1/.parts/`` under a name that hashes everything that determines
their content (sweep parameters, replicates, seed key, the library's source),
each with a sha256 sidecar; a rerun reuses a part only after checking its
checksum, row count and replicate ids (resumable, never stale).  The final
CSVs and ``data/MANIFEST.json`` (sha256, command, effective parameters, seeds,
versions, git commit) are written when all tasks are done.

**Shipped data are never overwritten by a different run.**  A sweep's CSV that
exists is replaced only when ``data/MANIFEST.json`` has an entry for it whose
checksum matches the file and whose parameters equal this run's; anything
else (no manifest, no entry, an edited file, fewer sizes, fewer replicates,
another sweep definition) is refused unless ``--force`` is given
(``make data FORCE=1``); write restricted runs to another ``--out``.  The
manifest is merged under a lock and replaced atomically, so runs that finish
together into one folder all keep their entries.  Arguments that select
nothing are refused.  Ctrl-C cancels pending tasks, keeps every finished part
and exits with status 130.

Run ``python -m renyi.sweeps --help`` (or ``make data``).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import hashlib
import json
import math
import os
import sys
from pathlib import Path

from .._docs import CLI_MAIN, fill
from .._validation import as_int
from .datafiles import (
    ManifestError,
    check_target,
    file_sha256,
    git_output,
    read_manifest,
    read_rows,
    update_manifest,
    versions,
    write_rows,
)
from .definitions import FIELDS, QUICK, ROOT_SEED, SWEEPS
from .tasks import Task, run_task, tasks_for

__all__ = ["run_sweeps", "load_sweep", "ShippedDataError", "main"]


def load_sweep(name: str, *, recompute: bool = False, data: Path | None = None, **restrict) -> list[dict]:
    """The rows of a shipped sweep, or of a small recomputation into a temporary folder.

    Parameters
    ----------
    name : str
        A key of ``SWEEPS`` (``"section4"``, ``"tuning"``, ``"orders"``, ``"floor_r"``).
    recompute : bool, default False
        Recompute instead of reading ``data/part1/{name}.csv``: the slice ``restrict``, or
        without it the quick slice :data:`~renyi.sweeps.definitions.QUICK` ``[name]``.
    data : path, optional
        The data folder; default: ``data/`` of the repository.
    **restrict
        ``sizes``, ``mechanisms``, ``replicates`` of a recomputation.

    Returns
    -------
    list of dict
    """
    if name not in SWEEPS:
        raise ValueError(f"unknown sweep {name!r}; choose one of {', '.join(SWEEPS)}")
    if not recompute:
        folder = Path(data) if data is not None else Path(__file__).resolve().parents[3] / "data"
        return read_rows(folder / "part1" / f"{name}.csv")
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        run_sweeps(Path(tmp), (name,), progress=False, **(restrict or QUICK[name]))
        return read_rows(Path(tmp) / "part1" / f"{name}.csv")


def _library_digest() -> str:
    """sha256 of the library's source: a part computed by other code is never reused."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _part_paths(part_dir: Path, task: Task, spec: dict, lib: str) -> tuple[Path, Path]:
    ident = json.dumps(
        {
            "spec": spec,
            "task": [task.sweep, task.mechanism, task.n, task.block, list(task.replicates)],
            "key": task.key,
            "root_seed": ROOT_SEED,
            "lib": lib,
        },
        sort_keys=True,
    )
    digest = hashlib.sha256(ident.encode()).hexdigest()[:16]
    stem = part_dir / f"{task.name}-{digest}"
    return stem.with_suffix(".csv"), stem.with_suffix(".sha256")


def _rows_per_replicate(spec: dict, sweep: str) -> int:
    if sweep == "tuning":
        combos = len(spec["bandwidth_factors"]) * len(spec["floor_factors"])
        combos += len([b for b in spec["beta_tau"] if b != 1.0])
        return combos * len(spec["orders"])
    if sweep == "floor_r":
        return len(spec["relative_errors"]) * len(spec["orders"])
    if sweep == "verdict":
        return 1
    return len(spec["orders"])


def _valid_part(csv_path: Path, sum_path: Path, task: Task, spec: dict) -> bool:
    """A cached part is reused only if its checksum, row count and replicate ids are right."""
    if not (csv_path.exists() and sum_path.exists()):
        return False
    if sum_path.read_text().strip() != file_sha256(csv_path):
        return False
    try:
        rows = read_rows(csv_path)
    except (ValueError, KeyError, csv.Error):
        return False
    expected = len(task.replicates) * _rows_per_replicate(spec, task.sweep)
    return len(rows) == expected and sorted({r["replicate"] for r in rows}) == list(task.replicates)


def _make_executor(workers: int, dask_scheduler: str | None):
    if dask_scheduler:
        try:
            from dask.distributed import Client
        except ImportError:
            raise SystemExit(
                "renyi.sweeps: --dask-scheduler needs dask[distributed] (pip install 'renyi[distributed]')"
            ) from None
        return Client(dask_scheduler).get_executor()
    if workers == 1:
        return None
    return cf.ProcessPoolExecutor(max_workers=workers)


#: A run would replace shipped data that the manifest does not describe as this run would.
ShippedDataError = ManifestError


def _effective(sweep: str, tasks: list[Task]) -> dict:
    spec = dict(SWEEPS[sweep])
    spec["mechanisms"] = [m for m in spec["mechanisms"] if any(t.mechanism == m for t in tasks)]
    spec["sizes"] = [n for n in spec["sizes"] if any(t.n == n for t in tasks)]
    spec["replicates"] = max((max(t.replicates) + 1 for t in tasks), default=0)
    return spec


def run_sweeps(
    out: Path,
    sweeps=("section4", "tuning", "orders", "floor_r"),
    *,
    executor=None,
    progress=True,
    sizes=None,
    mechanisms=None,
    replicates=None,
    command="",
    force=False,
) -> dict:
    """Run (or resume) sweeps, then write the CSVs and merge their entries into the manifest.

    Raises
    ------
    ValueError
        When the restriction selects no task, or names unknown sweeps.
    renyi.sweeps.datafiles.ManifestError
        (also importable here as ``ShippedDataError``) When ``force`` is False and ``out``
        already holds a sweep's CSV that the manifest does not describe exactly (no manifest,
        no entry, another checksum, other parameters), or the manifest cannot be read.

    Parameters
    ----------
    out : Path
        The data folder.
    sweeps : sequence of str
    executor : concurrent.futures.Executor, optional
    progress : bool, default True
        A terminal progress bar.
    sizes, mechanisms, replicates : optional
        Restrictions (see :func:`~renyi.sweeps.tasks_for`); a restricted run refuses to overwrite shipped files.
    command : str
        Recorded in the manifest.
    force : bool, default False
        Overwrite shipped files even when the parameters differ.

    Returns
    -------
    dict
        The manifest entries written (relative path -> entry).
    """
    out = Path(out)
    all_tasks = _selected_tasks(sweeps, sizes, mechanisms, replicates)
    manifest = read_manifest(out / "MANIFEST.json")
    effective = {s: _effective(s, tasks) for s, tasks in all_tasks.items()}
    if not force:
        for sweep, spec in effective.items():
            check_target(out, f"part1/{sweep}.csv", manifest, spec)
    part_dir = out / "part1" / ".parts"
    part_dir.mkdir(parents=True, exist_ok=True)
    lib = _library_digest()
    # provenance of the code that computes the parts: taken now, not when the run ends
    provenance = {
        "git_commit": git_output("rev-parse", "HEAD"),
        "lib_dirty": bool(git_output("status", "--porcelain", "--", "lib")),
    }
    paths = {t: _part_paths(part_dir, t, SWEEPS[t.sweep], lib) for tasks in all_tasks.values() for t in tasks}
    todo = [t for t in paths if not _valid_part(*paths[t], t, SWEEPS[t.sweep])]
    # Largest tasks first keeps the workers busy until the end.
    todo.sort(key=lambda t: -t.n)
    _run_parts(todo, paths, executor, progress)
    entries = {}
    for sweep, tasks in all_tasks.items():
        path = out / "part1" / f"{sweep}.csv"
        rows = _assemble(sweep, tasks, paths, path)
        entries[f"part1/{sweep}.csv"] = {
            "sha256": file_sha256(path),
            "bytes": path.stat().st_size,
            "rows": rows,
            "command": command or f"python -m renyi.sweeps --sweeps {sweep}",
            "parameters": effective[sweep],
            "root_seed": ROOT_SEED,
            "spawn_scheme": "SeedSequence(root_seed, spawn_key=(sweep, case, size, block) indices)"
            ".spawn(block) -> one stream per replicate -> .spawn(2) -> (x, x') samples",
            **provenance,
            "versions": versions(),
        }
    problems = update_manifest(
        out, entries, description="Part I simulation results; see data/README.md. Verified by tests/test_data.py."
    )
    for line in problems:
        print(f"renyi.sweeps: warning: {line}", file=sys.stderr)
    return entries


def _selected_tasks(sweeps, sizes, mechanisms, replicates) -> dict:
    """The tasks of each sweep under the restriction; refuses unknown sweeps and empty selections."""
    unknown = [s for s in sweeps if s not in SWEEPS]
    if unknown or not sweeps:
        raise ValueError(f"unknown or no sweeps {unknown or sweeps!r}; choose from {', '.join(SWEEPS)}")
    if replicates is not None:
        as_int(replicates, "replicates")
    all_tasks = {s: tasks_for(s, sizes=sizes, mechanisms=mechanisms, replicates=replicates) for s in sweeps}
    empty = [s for s, tasks in all_tasks.items() if not tasks]
    if empty:
        raise ValueError(
            f"the restriction selects nothing in sweep(s) {', '.join(empty)} "
            f"(sizes={sizes}, mechanisms={mechanisms}); nothing was run or written"
        )
    return all_tasks


def _run_parts(todo, paths, executor, progress) -> None:
    """Compute the missing parts, in this process or on ``executor``, keeping finished ones on Ctrl-C."""
    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), unit="task", desc="Part I sweeps", file=sys.stderr)

    def done(task, rows):
        csv_path, sum_path = paths[task]
        digest = write_rows(csv_path, FIELDS[task.sweep], rows)
        sum_path.write_text(digest + "\n")
        if bar is not None:
            bar.update()

    try:
        if executor is None:
            for task in todo:
                done(task, run_task(task))
            return
        futures = {executor.submit(run_task, t): t for t in todo}
        try:
            for fut in cf.as_completed(futures):
                done(futures[fut], fut.result())
        except KeyboardInterrupt:
            for fut in futures:
                fut.cancel()
            for fut, task in futures.items():  # keep what finished meanwhile
                if fut.done() and not fut.cancelled() and fut.exception() is None:
                    if not _valid_part(*paths[task], task, SWEEPS[task.sweep]):
                        done(task, fut.result())
            raise
    finally:
        if bar is not None:
            bar.close()


def _assemble(sweep, tasks, paths, path: Path) -> int:
    """Concatenate a sweep's parts, in a fixed order, into ``path``; returns the row count."""
    rows = []
    for task in sorted(tasks, key=lambda t: t.key):
        rows += read_rows(paths[task][0])
    cases = SWEEPS[sweep]["mechanisms"]
    rows.sort(key=lambda r: (cases.index(r["mechanism"]), r["n"], r["replicate"]))
    write_rows(path, FIELDS[sweep], rows)
    return len(rows)


def _at_least_one(kind):
    """An argparse type: a finite number of ``kind`` (int or float) that is at least 1."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {'an integer' if kind is int else 'a number'}: {text!r}") from None
        if not (value >= 1 and math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"must be a finite number >= 1, got {text}")
        return value

    return parse


@fill(cli_main=CLI_MAIN)
def main(argv=None) -> int:
    """The command line ``python -m renyi.sweeps`` (``make data``).

    {{cli_main}}
    """
    parser = argparse.ArgumentParser(prog="python -m renyi.sweeps", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("data"), help="data folder (default: data)")
    parser.add_argument("--sweeps", nargs="+", choices=list(SWEEPS), default=list(SWEEPS))
    parser.add_argument(
        "--workers", type=_at_least_one(int), default=os.cpu_count() or 1, help="local processes (default: all cores)"
    )
    parser.add_argument("--dask-scheduler", metavar="ADDRESS", help="run tasks on a dask.distributed cluster")
    parser.add_argument(
        "--max-n", type=_at_least_one(float), help="skip sample sizes above this (a quick, smaller run)"
    )
    parser.add_argument("--replicates", type=_at_least_one(int), help="replicates per point (default: the sweep's)")
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace CSVs in --out even where the manifest does not describe them as this run would",
    )
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    sizes = None
    if args.max_n is not None:
        sizes = sorted({n for s in args.sweeps for n in SWEEPS[s]["sizes"] if n <= args.max_n})
        if not sizes:
            parser.exit(
                2,
                f"renyi.sweeps: error: --max-n {args.max_n:g} selects no sample size "
                f"(the smallest is {min(n for s in args.sweeps for n in SWEEPS[s]['sizes']):,})\n",
            )
    command = "python -m renyi.sweeps " + " ".join(argv if argv is not None else sys.argv[1:])
    executor = _make_executor(args.workers, args.dask_scheduler)
    try:
        run_sweeps(
            args.out,
            args.sweeps,
            executor=executor,
            progress=not args.no_progress,
            sizes=sizes,
            replicates=args.replicates,
            command=command.strip(),
            force=args.force,
        )
    except (ShippedDataError, ValueError, OSError) as exc:
        print(f"renyi.sweeps: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("renyi.sweeps: interrupted; finished tasks are kept and a rerun resumes", file=sys.stderr)
        return 130
    finally:
        if executor is not None:
            if isinstance(executor, cf.ProcessPoolExecutor):
                executor.shutdown(wait=False, cancel_futures=True)
                # A running task can take minutes at n = 10^7; after Ctrl-C, do not wait for it.
                for proc in list((getattr(executor, "_processes", None) or {}).values()):
                    proc.terminate()
            else:
                executor.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
