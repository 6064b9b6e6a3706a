r"""Simulation sweeps of Part I, written to ``data/part1/*.csv`` with a manifest.

Two sweeps reproduce and extend Section IV of Kutta, Askin and Dunsche (2024):

``section4``
    Every mechanism of :data:`renyi.mechanisms.MECHANISMS`, the pair (21),
    orders :math:`\lambda\in\{2,5,7\}`, :math:`n` on a log grid from
    :math:`10^3` to :math:`10^7` per side, :math:`R=100` replicates per point,
    library defaults for :math:`(h,\tau,\beta)`.
``tuning``
    Gaussian and Laplace mechanisms at :math:`n\in\{10^4,10^6\}`: the bound on
    a grid of bandwidth and floor multipliers around the defaults, and of
    :math:`\beta\tau` values.

Every task — one (sweep, mechanism, n, block of replicates) — draws from its
own stream ``SeedSequence(ROOT_SEED, spawn_key=task.key)``, a function of the
task's identity only, so results do not depend on the number of workers or
the order in which tasks finish.  Finished tasks are kept in
``data/part1/.parts/`` and skipped on a rerun (resumable); the final CSVs and
``data/MANIFEST.json`` (sha256, command, parameters, seeds, versions, git
commit) are written when all tasks are done.

Run ``python -m renyi.experiments --help`` (or ``make data``).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import hashlib
import io
import json
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .audit import bound_from_densities, default_floor, rdp_lower_bound
from .density import default_bandwidth, kde_on_grid
from .mechanisms import ADJACENT_PAIR, MECHANISMS

__all__ = ["ROOT_SEED", "SWEEPS", "Task", "tasks_for", "run_task", "run_sweeps", "read_rows", "summarize", "main"]

#: Root entropy of every Part I sweep (minted once with SeedSequence().entropy, then fixed).
ROOT_SEED = 0x5EED_2026_1129_0001

SECTION4 = {
    "mechanisms": list(MECHANISMS),
    "sizes": [1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000, 10_000_000],
    "orders": [2.0, 5.0, 7.0],
    "replicates": 100,
    "block": 25,
}
TUNING = {
    "mechanisms": ["gaussian", "laplace"],
    "sizes": [10_000, 1_000_000],
    "orders": [2.0, 5.0],
    "replicates": 100,
    "block": 25,
    "bandwidth_factors": [0.25, 0.5, 1.0, 2.0, 4.0],
    "floor_factors": [0.1, 0.3, 1.0, 3.0, 10.0],
    "beta_tau": [0.1, 1.0, 10.0],
}
SWEEPS = {"section4": SECTION4, "tuning": TUNING}

FIELDS = {
    "section4": ["mechanism", "n", "replicate", "order", "target", "estimate", "std_error", "bias", "lower",
                 "bandwidth", "floor", "beta"],
    "tuning": ["mechanism", "n", "replicate", "order", "target", "bandwidth_factor", "floor_factor", "beta_tau",
               "bandwidth", "floor", "beta", "estimate", "std_error", "bias", "lower"],
}


@dataclass(frozen=True)
class Task:
    """One unit of work: a block of replicates for one mechanism and sample size."""

    sweep: str
    mechanism: str
    n: int
    block: int
    replicates: tuple[int, ...]

    @property
    def key(self) -> tuple[int, int, int, int]:
        """spawn_key of the task's stream: (sweep, mechanism, size, block) indices."""
        spec = SWEEPS[self.sweep]
        return (list(SWEEPS).index(self.sweep), list(MECHANISMS).index(self.mechanism),
                spec["sizes"].index(self.n), self.block)

    @property
    def name(self) -> str:
        return f"{self.sweep}-{self.mechanism}-n{self.n}-b{self.block}"


def tasks_for(sweep: str, *, sizes=None, mechanisms=None, replicates=None) -> list[Task]:
    """The tasks of a sweep, optionally restricted (the restriction keeps each task's seed)."""
    spec = SWEEPS[sweep]
    reps = spec["replicates"] if replicates is None else replicates
    out = []
    for mech in spec["mechanisms"]:
        if mechanisms is not None and mech not in mechanisms:
            continue
        for n in spec["sizes"]:
            if sizes is not None and n not in sizes:
                continue
            for block, start in enumerate(range(0, reps, spec["block"])):
                out.append(Task(sweep, mech, n, block, tuple(range(start, min(start + spec["block"], reps)))))
    return out


def _stream(task: Task) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(ROOT_SEED, spawn_key=task.key))


def run_task(task: Task) -> list[dict]:
    """Run one task and return its rows (deterministic given the task)."""
    spec = SWEEPS[task.sweep]
    mech = MECHANISMS[task.mechanism]
    x, x_prime = ADJACENT_PAIR
    rng = _stream(task)
    # One child stream per replicate, so a replicate's numbers do not depend on its block size.
    streams = rng.spawn(spec["block"])
    rows = []
    for rep, stream in zip(task.replicates, streams):
        rng_p, rng_q = stream.spawn(2)
        a, b = mech.sample(x, task.n, rng_p), mech.sample(x_prime, task.n, rng_q)
        if task.sweep == "section4":
            for bound in rdp_lower_bound(a, b, spec["orders"], discrete=mech.discrete):
                rows.append({"mechanism": task.mechanism, "n": task.n, "replicate": rep, "order": bound.order,
                             "target": mech.target(bound.order), "estimate": bound.estimate,
                             "std_error": bound.std_error, "bias": bound.bias, "lower": bound.lower,
                             "bandwidth": bound.bandwidth, "floor": bound.floor, "beta": bound.beta})
        else:
            rows.extend(_tuning_rows(task, mech, a, b, rep, spec))
    return rows


def _tuning_rows(task, mech, a, b, rep, spec):
    h0 = default_bandwidth(a, b)
    tau0 = default_floor(task.n, bandwidth=h0)
    rows = []
    combos = [(hf, tf, 1.0) for hf in spec["bandwidth_factors"] for tf in spec["floor_factors"]]
    combos += [(1.0, 1.0, bt) for bt in spec["beta_tau"] if bt != 1.0]
    fits = {}
    for hf, tf, bt in combos:
        h = h0 * hf
        if hf not in fits:
            fits[hf] = kde_on_grid(a, b, h)
        grid = fits[hf]
        tau = tau0 * tf
        beta = bt / tau
        for lam in spec["orders"]:
            est, se, bias, lower = bound_from_densities(grid.p, grid.q, lam, tau, beta, grid.dx, a.size, b.size,
                                                        bandwidth=h)
            rows.append({"mechanism": task.mechanism, "n": task.n, "replicate": rep, "order": lam,
                         "target": mech.target(lam), "bandwidth_factor": hf, "floor_factor": tf,
                         "beta_tau": bt, "bandwidth": h, "floor": tau, "beta": beta, "estimate": est,
                         "std_error": se, "bias": bias, "lower": lower})
    return rows


# ------------------------------------------------------------------ storage

def _fmt(value):
    if isinstance(value, float):
        return repr(float(value))  # shortest repr that round-trips: bit-exact storage
    return "" if value is None else str(value)


def _write_rows(path: Path, fields, rows) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(fields)
    for row in rows:
        writer.writerow([_fmt(row[f]) for f in fields])
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(buf.getvalue())
    os.replace(tmp, path)  # atomic: an interrupted run never leaves a half-written part


def read_rows(path) -> list[dict]:
    """Read a sweep CSV back into dicts of Python numbers."""
    with open(path, newline="") as fh:
        out = []
        for row in csv.DictReader(fh):
            out.append({k: (int(v) if k in ("n", "replicate") else (v if k == "mechanism" else
                            (None if v == "" else float(v)))) for k, v in row.items()})
    return out


def summarize(rows, by=("mechanism", "n", "order"), *, column="lower") -> list[dict]:
    r"""Per-group summaries of a sweep: replicates, mean of ``column``/target, 5–95 % band, coverage.

    Coverage is the fraction of replicates with ``lower <= target``, i.e. with
    a valid lower bound.  Returns one dict per group, sorted by the group key.
    """
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in by), []).append(row)
    out = []
    for key in sorted(groups, key=lambda k: tuple(str(v) if isinstance(v, str) else v for v in k)):
        g = groups[key]
        values = np.array([r[column] for r in g])
        target = g[0]["target"]
        entry = dict(zip(by, key))
        entry.update(replicates=len(g), target=target, mean=float(values.mean()),
                     q05=float(np.quantile(values, 0.05)), q95=float(np.quantile(values, 0.95)),
                     mean_ratio=float(values.mean() / target),
                     coverage=float(np.mean([r["lower"] <= r["target"] for r in g])))
        out.append(entry)
    return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _git(*args) -> str:
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).resolve().parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def _versions() -> dict:
    import scipy
    import statsmodels
    return {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
            "statsmodels": statsmodels.__version__, "renyi": __import__("renyi").__version__,
            "platform": platform.platform()}


def _make_executor(workers: int, dask_scheduler: str | None):
    if dask_scheduler:
        try:
            from dask.distributed import Client
        except ImportError:
            raise SystemExit("renyi.experiments: --dask-scheduler needs dask[distributed] "
                             "(pip install 'renyi[distributed]')") from None
        return Client(dask_scheduler).get_executor()
    if workers == 1:
        return None
    return cf.ProcessPoolExecutor(max_workers=workers)


def run_sweeps(out: Path, sweeps=("section4", "tuning"), *, executor=None, progress=True,
               sizes=None, mechanisms=None, replicates=None, command="") -> dict:
    """Run (or resume) sweeps, then write the CSVs and the manifest.  Returns the manifest."""
    out = Path(out)
    part_dir = out / "part1" / ".parts"
    part_dir.mkdir(parents=True, exist_ok=True)
    todo = []
    all_tasks = {s: tasks_for(s, sizes=sizes, mechanisms=mechanisms, replicates=replicates) for s in sweeps}
    for tasks in all_tasks.values():
        todo += [t for t in tasks if not (part_dir / f"{t.name}.csv").exists()]
    # Largest tasks first keeps the workers busy until the end.
    todo.sort(key=lambda t: -t.n)
    bar = None
    if progress and todo:
        from tqdm import tqdm
        bar = tqdm(total=len(todo), unit="task", desc="Part I sweeps", file=sys.stderr)

    def done(task, rows):
        _write_rows(part_dir / f"{task.name}.csv", FIELDS[task.sweep], rows)
        if bar is not None:
            bar.update()

    if executor is None:
        for task in todo:
            done(task, run_task(task))
    else:
        futures = {executor.submit(run_task, t): t for t in todo}
        for fut in cf.as_completed(futures):
            done(futures[fut], fut.result())
    if bar is not None:
        bar.close()

    manifest_path = out / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {"files": {}}
    commit = _git("rev-parse", "HEAD")
    dirty = bool(_git("status", "--porcelain", "--", "lib"))
    for sweep, tasks in all_tasks.items():
        rows = []
        for task in sorted(tasks, key=lambda t: t.key):
            rows += read_rows(part_dir / f"{task.name}.csv")
        rows.sort(key=lambda r: (SWEEPS[sweep]["mechanisms"].index(r["mechanism"]), r["n"], r["replicate"]))
        path = out / "part1" / f"{sweep}.csv"
        _write_rows(path, FIELDS[sweep], rows)
        manifest["files"][f"part1/{sweep}.csv"] = {
            "sha256": _sha256(path), "bytes": path.stat().st_size, "rows": len(rows),
            "command": command or f"python -m renyi.experiments --sweeps {sweep}",
            "parameters": SWEEPS[sweep] | ({"sizes": sizes} if sizes else {}) |
                          ({"replicates": replicates} if replicates else {}),
            "root_seed": ROOT_SEED,
            "spawn_scheme": "SeedSequence(root_seed, spawn_key=(sweep, mechanism, size, block) indices)"
                            ".spawn(block) -> one stream per replicate -> .spawn(2) -> (x, x') samples",
            "git_commit": commit, "lib_dirty": dirty, "versions": _versions(),
        }
    manifest["description"] = "Part I simulation results; see data/README.md. Verified by tests/test_data.py."
    manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m renyi.experiments", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("data"), help="data folder (default: data)")
    parser.add_argument("--sweeps", nargs="+", choices=list(SWEEPS), default=list(SWEEPS))
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="local processes (default: all cores)")
    parser.add_argument("--dask-scheduler", metavar="ADDRESS", help="run tasks on a dask.distributed cluster")
    parser.add_argument("--max-n", type=float, help="skip sample sizes above this (a quick, smaller run)")
    parser.add_argument("--replicates", type=int, help="replicates per point (default: the sweep's)")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    sizes = None
    if args.max_n:
        sizes = sorted({n for s in args.sweeps for n in SWEEPS[s]["sizes"] if n <= args.max_n})
    executor = _make_executor(args.workers, args.dask_scheduler)
    command = "python -m renyi.experiments " + " ".join(argv if argv is not None else sys.argv[1:])
    try:
        run_sweeps(args.out, args.sweeps, executor=executor, progress=not args.no_progress, sizes=sizes,
                   replicates=args.replicates, command=command.strip())
    finally:
        if executor is not None:
            executor.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
