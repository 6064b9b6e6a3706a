"""Speed and memory of ``rdp_lower_bound`` against peer KDE pipelines (``make bench``).

Every pipeline computes the same thing — two density estimates on one grid,
then the floored-softmax estimate and the eq. (18) standard error for three
orders — and only the density back-end differs:

* ``renyi``: the library's default (linear binning + FFT on a grid);
* ``renyi-exact-tails``: the library with ``tails="relative"`` (fast Gauss transform);
* ``kdepy``: KDEpy ``FFTKDE`` (linear binning + FFT) on the same grid;
* ``statsmodels``: ``KDEUnivariate(fft=True)`` on its own grid, interpolated;
* ``scipy``: ``gaussian_kde`` evaluated on the grid (direct sum; n <= 1e4);
* ``bincount``: two bare ``bincount`` passes (nearest-node binning of each sample), the physical
  floor of any binned method: not a pipeline, a yardstick.

Also measured: the command line on two ``.npy`` files of 10^7 values, and a chunked audit of
10^8 values per side drawn by a seeded sampler (``renyi.audit.streaming``), with its peak memory.

Times are the best of a few repetitions, measured in this run, so ratios
compare like with like on this machine.  Peak memory is traced with
``tracemalloc`` (numpy allocations included) relative to the input arrays.

Besides the Markdown tables on standard output, every table is written as CSV to
``benchmarks/results/`` (``--results``), with ``machine.json`` describing the machine (CPU
model, the SIMD extensions numpy dispatches to, cores, versions); the book's *Performance*
page reads them.  The ``--only-*`` runs rewrite their own tables only and leave ``machine.json``
as the last full run wrote it.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import time
import tracemalloc
from pathlib import Path

import numpy as np
from renyi.audit import default_floor, floored_estimate, rdp_lower_bound
from renyi.audit.bandwidth import default_bandwidth
from renyi.audit.density import kde_on_grid

ORDERS = [2.0, 5.0, 7.0]
#: Where the CSV tables and the machine description go (``--results``).
RESULTS = Path(__file__).resolve().parent / "results"
#: Rows of each table of this run, written by :func:`write_results`.
TABLES: dict[str, list[dict]] = {}


def record(table: str, **row) -> None:
    """Keep one row of a table for the CSV files of this run."""
    TABLES.setdefault(table, []).append(row)


def machine() -> dict:
    """The machine and environment of this run: what makes its seconds its own."""
    import renyi
    import scipy
    from numpy._core import _multiarray_umath as umath

    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    found = umath.__cpu_features__
    try:
        from importlib.metadata import version

        kdepy = version("KDEpy")
    except Exception:
        kdepy = None
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "simd": [f for f in umath.__cpu_dispatch__ if found.get(f)],
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "kdepy": kdepy,
        "renyi": renyi.__version__,
        "platform": platform.platform(),
        "date": time.strftime("%Y-%m-%d"),
    }


def write_results(folder: Path, machine_too: bool = True) -> None:
    """Write each table of this run as CSV, and machine.json (unless told not to), into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for table, rows in TABLES.items():
        with open(folder / f"{table}.csv", "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    if machine_too:
        write_machine(folder, "machine.json")
    also = " and machine.json" if machine_too else ""
    print(f"\nwrote {', '.join(sorted(TABLES))} (.csv){also} to {folder}")


def write_machine(folder: Path, name: str, **run) -> None:
    """Write the machine of this run, with ``run``'s settings (a time limit, versions), as ``folder / name``."""
    (folder / name).write_text(json.dumps({**machine(), **run}, indent=2) + "\n")


def _finish(p_hat, q_hat, dx, n, h):
    tau = default_floor(n, bandwidth=h)
    return [floored_estimate(p_hat, q_hat, lam, tau, 1 / tau, dx) for lam in ORDERS]


def renyi_pipeline(x, y):
    return rdp_lower_bound(x, y, ORDERS)


def renyi_exact_tails_pipeline(x, y):
    return rdp_lower_bound(x, y, ORDERS, tails="relative")


def bincount_floor(x, y):
    lo, dx = min(x.min(), y.min()), 0.01
    return [np.bincount(((s - lo) * (1 / dx)).astype(np.intp)) for s in (x, y)]


def _common_grid(x, y, h):
    est_size = kde_on_grid(x[:2], y[:2], h).size  # same padding rule as the library, tiny cost
    lo, hi = min(x.min(), y.min()) - 8 * h, max(x.max(), y.max()) + 8 * h
    return np.linspace(lo, hi, max(est_size, int((hi - lo) / (h / 8)) + 1))


def kdepy_pipeline(x, y):
    from KDEpy import FFTKDE

    h = default_bandwidth(x, y)
    grid = _common_grid(x, y, h)
    p_hat = FFTKDE(kernel="gaussian", bw=h).fit(x).evaluate(grid)
    q_hat = FFTKDE(kernel="gaussian", bw=h).fit(y).evaluate(grid)
    return _finish(np.maximum(p_hat, 0), np.maximum(q_hat, 0), grid[1] - grid[0], min(x.size, y.size), h)


def statsmodels_pipeline(x, y):
    import statsmodels.api as sm

    h = default_bandwidth(x, y)
    grid = _common_grid(x, y, h)
    dens = []
    for s in (x, y):
        k = sm.nonparametric.KDEUnivariate(s)
        k.fit(kernel="gau", bw=h, fft=True, gridsize=grid.size, cut=8)
        dens.append(np.maximum(np.interp(grid, k.support, k.density, left=0.0, right=0.0), 0))
    return _finish(dens[0], dens[1], grid[1] - grid[0], min(x.size, y.size), h)


def scipy_pipeline(x, y):
    from scipy.stats import gaussian_kde

    h = default_bandwidth(x, y)
    grid = _common_grid(x, y, h)
    dens = [gaussian_kde(s, bw_method=h / s.std(ddof=1))(grid) for s in (x, y)]
    return _finish(dens[0], dens[1], grid[1] - grid[0], min(x.size, y.size), h)


def measure(fn, x, y, repeat):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn(x, y)
        best = min(best, time.perf_counter() - start)
    tracemalloc.start()
    fn(x, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, peak / (x.nbytes + y.nbytes)


def tail_accuracy(n=20_000, seed=5):
    """Worst relative error of each back-end's p_hat against the exact direct sum (where > 1e-12)."""
    import statsmodels.api as sm
    from KDEpy import FFTKDE
    from renyi.audit.density import direct_kde

    rng = np.random.default_rng(seed)
    x, y = rng.normal(1, 5, n), rng.normal(0, 5, n)
    h = default_bandwidth(x, y)
    est = kde_on_grid(x, y, h, tails="relative")
    grid = est.grid
    exact = direct_kde(x, h, grid)
    keep = exact > 1e-12
    k = sm.nonparametric.KDEUnivariate(x)
    k.fit(kernel="gau", bw=h, fft=True, gridsize=grid.size, cut=8)
    backends = {
        'renyi tails="relative"': est.p,
        "renyi (default)": kde_on_grid(x, y, h).p,
        "kdepy": FFTKDE(bw=h).fit(x).evaluate(grid),
        "statsmodels": np.interp(grid, k.support, k.density, left=0.0, right=0.0),
    }
    print(
        f"\n# tail accuracy, n={n:,}, h={h:.3g}: max |p_hat/p_direct - 1| where p_direct > 1e-12"
        f" ({keep.sum()} of {grid.size} grid points)"
    )
    print("| pipeline | max relative error | smallest p_direct checked |")
    print("|---|---:|---:|")
    for name, dens in backends.items():
        rel = np.max(np.abs(dens[keep] / exact[keep] - 1))
        record("tail_accuracy", n=n, pipeline=name, max_relative_error=rel, smallest_p_checked=exact[keep].min())
        print(f"| {name} | {rel:.2e} | {exact[keep].min():.1e} |")


def lift_benchmark():
    """renyi.lift.global_optimum (Theorem 2): time and certified gap for |Y| = 3, 6, 10, 20.

    Random invertible models at alpha = 3, in two regimes: eps = 0.02 (outside Theorem 1's
    range for these models: the simplex binds) and eps = eps_max / 2 (inside it).  Two
    families: diagonally dominant columns with a Dirichlet P_Y (entries down to 0.003), and
    the tests' family with P_Y bounded away from 0.  Each case has a requested gap and a
    time limit: |Y| = 6 1e-6 within 10 s, |Y| = 10 1e-4 within 10 s, |Y| = 20 1e-4 within
    60 s (whatever gap it reaches); from |Y| = 8 once with one process and once with two
    (``workers=2``: the box bounds use both cores).  |Y| = 7 has no target: it shows where the
    cones alone stalled.  Two more regimes, 1e-4 within 10 s and one process: a tiny prior
    (|Y| = 10, min P_Y 8e-5, alpha = 5 and 3; also with two processes), and alpha = 1.5
    (|Y| = 6 and 10), below order 2, where the boxes' root comes from the chi^2 radius.  The
    yardstick is the conical branch and bound alone on the |Y| = 6 and 7 cases, measured in the
    same run.
    """
    from renyi.lift import EXAMPLES, LeakageModel, asymmetric_mechanism, epsilon_max, global_optimum

    medical = EXAMPLES["medical"]
    rng = np.random.default_rng(7)
    cases = [("medical example", medical, 0.02, 1e-6, 10.0)]
    for k, rtol, limit in ((6, 1e-6, 10.0), (10, 1e-4, 10.0), (20, 1e-4, 60.0)):
        a = 0.5 * np.eye(k) + 0.5 * rng.dirichlet(np.full(k, 0.5), size=k).T
        m = LeakageModel(a @ rng.dirichlet(np.ones(k)), a)
        cases.append((f"random \\|Y\\|={k}", m, 0.02, rtol, limit))
        cases.append((f"random \\|Y\\|={k}", m, 0.5 * epsilon_max(m, 3), rtol, limit))
    # |Y| = 7 (no target of its own; the cones alone stalled there), from its own seed so that
    # the other cases stay as they were.
    seven = np.random.default_rng(17)
    a = 0.5 * np.eye(7) + 0.5 * seven.dirichlet(np.full(7, 0.5), size=7).T
    m = LeakageModel(a @ seven.dirichlet(np.ones(7)), a)
    cases.insert(3, ("random \\|Y\\|=7", m, 0.02, 1e-6, 10.0))
    cases.insert(4, ("random \\|Y\\|=7", m, 0.5 * epsilon_max(m, 3), 1e-6, 10.0))
    bounded = np.random.default_rng(11)
    a = 0.6 * np.eye(10) + 0.4 * bounded.dirichlet(np.full(10, 0.7), size=10).T
    m = LeakageModel(a @ (0.05 + 0.5 * bounded.dirichlet(np.ones(10))), a)
    cases.append(("P_Y >= 0.05, \\|Y\\|=10", m, 0.02, 1e-4, 10.0))
    cases.append(("P_Y >= 0.05, \\|Y\\|=10", m, 0.5 * epsilon_max(m, 3), 1e-4, 10.0))
    cases = [(label, model, 3.0, eps, rtol, limit) for label, model, eps, rtol, limit in cases]
    # Each family below from its own seed, so that the cases above stay as they were.
    tiny = np.random.default_rng(24)
    a = 0.5 * np.eye(10) + 0.5 * tiny.dirichlet(np.full(10, 0.5), size=10).T
    m = LeakageModel(a @ tiny.dirichlet(np.full(10, 0.3)), a)  # min P_Y 7.9e-5
    label = f"min P_Y {m.p_y.min():.0e}, \\|Y\\|=10"
    cases += [(label, m, 5.0, 0.005, 1e-4, 10.0), (label, m, 5.0, 0.5 * epsilon_max(m, 5), 1e-4, 10.0)]
    cases.append((label, m, 3.0, 0.02, 1e-4, 10.0))
    for k in (6, 10):
        low = np.random.default_rng(30 + k)
        a = 0.5 * np.eye(k) + 0.5 * low.dirichlet(np.full(k, 0.5), size=k).T
        m = LeakageModel(a @ low.dirichlet(np.ones(k)), a)
        for eps in (0.5 * epsilon_max(m, 1.5), 0.02):
            cases.append((f"random \\|Y\\|={k}", m, 1.5, eps, 1e-4, 10.0))
    print("\n# renyi.lift.global_optimum (Theorem 2)")
    print(
        "| case | alpha | eps | rtol | limit (s) | workers | time (s) | lower | upper | gap | upper from | "
        "outputs | two-scale |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    one_process = []
    for label, model, order, eps, rtol, limit in cases:
        two = asymmetric_mechanism(model, eps, order).utility
        # From |Y| = 8 the box branch and bound can use both cores (workers=2; measured at alpha >= 2).
        for workers in (1, 2) if model.p_y.size >= 8 and order >= 2 else (1,):
            res = global_optimum(model, eps, order, rtol=rtol, time_limit=limit, workers=workers)
            if workers == 1:
                one_process.append(res)
            record(
                "lift",
                case=label.replace("\\", ""),
                size=model.p_y.size,
                alpha=order,
                eps=eps,
                rtol=rtol,
                limit=limit,
                workers=workers,
                seconds=round(res.elapsed, 3),
                lower=res.lower_bound,
                upper=res.upper_bound,
                gap=res.gap,
                upper_from=res.upper_bound_source,
                outputs=len(res.p_u),
            )
            print(
                f"| {label} | {order:g} | {eps:.3g} | {rtol:.0e} | {limit:g} | {workers} | {res.elapsed:.2f} | "
                f"{res.lower_bound:.6g} | {res.upper_bound:.6g} | {res.gap:.1e} | {res.upper_bound_source} | "
                f"{len(res.p_u)} | {two:.6g} |",
                flush=True,
            )
    _cones_alone([case[:2] + case[3:] for case in cases[1:5]], one_process[1:5])


def _cones_alone(cases, with_boxes):
    """The same |Y| = 6 and 7 cases with the conical branch and bound alone, which ran them
    until the boxes were extended to |Y| >= 6: the yardstick, measured in the same run
    (``with_boxes``: their results in the main table)."""
    from renyi.lift import global_optimum
    from renyi.lift.optimum import Heuristics, SearchSettings

    cones_only = SearchSettings(heuristics=Heuristics(box_min_size=10**9))

    print("\n# the same cases with the conical branch and bound alone (boxes switched off)")
    print("| case | eps | rtol | limit (s) | time (s) | gap | cones | time with the boxes (s) | gap with the boxes |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (label, model, eps, rtol, limit), both in zip(cases, with_boxes):
        cones = global_optimum(model, eps, 3, rtol=rtol, time_limit=limit, settings=cones_only)
        record(
            "lift_cones_alone",
            case=label.replace("\\", ""),
            eps=eps,
            rtol=rtol,
            limit=limit,
            seconds=round(cones.elapsed, 3),
            gap=cones.gap,
            cones=cones.cones,
            seconds_with_boxes=round(both.elapsed, 3),
            gap_with_boxes=both.gap,
        )
        print(
            f"| {label} | {eps:.3g} | {rtol:.0e} | {limit:g} | {cones.elapsed:.2f} | {cones.gap:.1e} | "
            f"{cones.cones:,} | {both.elapsed:.2f} | {both.gap:.1e} |",
            flush=True,
        )


def cli_benchmark(n=10_000_000):
    """The whole command line on two .npy files of n values each, against loading them."""
    import os
    import subprocess
    import sys
    import tempfile

    rng = np.random.default_rng(3)
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "p.npy"), rng.normal(1, 5, n))
        np.save(os.path.join(tmp, "q.npy"), rng.normal(0, 5, n))
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "renyi", "audit", "p.npy", "q.npy", "--orders", "2", "5", "7"],
            cwd=tmp,
            check=True,
            capture_output=True,
        )
        t_cli = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", "import numpy as np; np.load('p.npy'); np.load('q.npy')"], cwd=tmp, check=True
        )
        t_load = time.perf_counter() - start
    record("cli", n=n, seconds_cli=round(t_cli, 3), seconds_startup_and_load=round(t_load, 3))
    print(f"\n# command line, two .npy files of {n:,} values: `python -m renyi audit p.npy q.npy --orders 2 5 7`")
    print("| step | time (s) |\n|---|---:|")
    print(f"| whole CLI (start-up, memory-mapped load, fit, 3 orders x 2 directions, print) | {t_cli:.2f} |")
    print(f"| python start-up + np.load of both files | {t_load:.2f} |", flush=True)


def chunked_benchmark(n=100_000_000, chunk=5_000_000):
    """A 10^8-per-side audit from a seeded sampler in chunks (renyi.audit.streaming)."""
    from renyi.audit import bounds_from_fit
    from renyi.audit.streaming import fit_densities_chunked

    def source(mean, seed):
        def chunks():
            rng = np.random.default_rng(seed)
            for start in range(0, n, chunk):
                yield rng.normal(mean, 5, min(chunk, n - start))

        return chunks

    start = time.perf_counter()
    for _ in source(1, 1)():
        pass
    t_sample = time.perf_counter() - start
    tracemalloc.start()
    start = time.perf_counter()
    bounds = bounds_from_fit(fit_densities_chunked(source(1, 1), source(0, 2)), ORDERS)
    t = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    record(
        "chunked",
        n=n,
        chunk=chunk,
        seconds=round(t, 3),
        seconds_sampling=round(6 * t_sample, 3),
        peak_mib=round(peak / 2**20, 1),
        lower_order_2=round(bounds[0].lower, 6),
    )
    print(f"\n# chunked audit, {n:,} Gaussian outputs per side in chunks of {chunk:,} (renyi.audit.streaming)")
    print("| time (s) | of which sampling (3 passes x 2 sides) | peak traced memory | lower bound at order 2 |")
    print("|---:|---:|---:|---:|")
    print(
        f"| {t:.1f} | {6 * t_sample:.1f} | {peak / 2**20:.0f} MiB | {bounds[0].lower:.5f} (epsilon 0.04) |", flush=True
    )


def calibrated_rounds(microseconds: float = 20.0) -> tuple[int, float]:
    """Rounds of busy_box that cost about ``microseconds`` an output here, and the cost measured."""
    from black_boxes import busy_box

    rng, n = np.random.default_rng(0), 20_000
    start = time.perf_counter()
    busy_box((0.0, 200), n, rng)
    per_round = (time.perf_counter() - start) / (200 * n)
    rounds = max(1, round(microseconds * 1e-6 / per_round))
    start = time.perf_counter()
    busy_box((0.0, rounds), n, rng)
    return rounds, (time.perf_counter() - start) / n * 1e6


_MEMORY_PROBE = """
import pickle, resource, sys
import numpy as np
sys.path.insert(0, {here!r})
from black_boxes import light_box
from renyi.audit import audit
from renyi.audit.counts import GridCounts
if __name__ == "__main__":
    n = int(sys.argv[1])
    audit(light_box, [1.0], [0.0], n, 2.0, rng=np.random.default_rng(1), workers=2, discrete=False, progress=False)
    task = GridCounts.of(light_box([1.0], 1_000_000, np.random.default_rng(2)), 0.002)
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, len(pickle.dumps(task)))
"""


_SCALING_PROBE = """
import sys, time
import numpy as np
sys.path.insert(0, {here!r})
from black_boxes import busy_box
from renyi.audit import audit
if __name__ == "__main__":
    n, workers, rounds = (int(v) for v in sys.argv[1:])
    start = time.perf_counter()
    audit(busy_box, (1.0, rounds), (0.0, rounds), n, 2.0, rng=np.random.default_rng(3), workers=workers)
    print(time.perf_counter() - start)
"""


_LIBRARY_PROBE = """
import sys, time
import numpy as np
sys.path.insert(0, {here!r})
from black_boxes import diffprivlib_geometric
from renyi.audit import audit
if __name__ == "__main__":
    n, workers = (int(v) for v in sys.argv[1:])
    start = time.perf_counter()
    audit(diffprivlib_geometric, [1], [0], n, 2.0, rng=np.random.default_rng(4), workers=workers)
    print(time.perf_counter() - start)
"""


def library_scaling(counts, cores, n=10**5):
    """One real-library black box (diffprivlib's Geometric, a Python call per output) in tasks,
    where the ``[libraries]`` extra is installed; a line saying so where it is not."""
    import importlib.util

    if importlib.util.find_spec("diffprivlib") is None:
        print("\n# diffprivlib Geometric in tasks: skipped (pip install -e '.[libraries]' to measure it)")
        return
    print(f"\n# diffprivlib Geometric(epsilon=1) in tasks, {n:,} outputs per side, {cores} cores")
    print("| workers | time (s) | speed-up |")
    print("|---:|---:|---:|")
    probe = _LIBRARY_PROBE.format(here=str(Path(__file__).resolve().parent))
    timed_in_tasks("diffprivlib", probe, n, counts, cores, label=False)


def timed_in_tasks(part, probe, n, counts, cores, *, extra=(), cost="", label=True):
    """Time one audit script (``probe``) with each number of workers; record and print each row.

    A script of its own: a spawned worker re-imports the main script, and this one imports
    every peer pipeline, which a user's audit script would not.
    """
    import subprocess
    import sys

    base = None
    for workers in counts:
        args = [sys.executable, "-c", probe, str(n), str(workers), *map(str, extra)]
        seconds = float(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
        base = seconds if base is None else base
        record(
            "parallel",
            part=part,
            n=n,
            workers=workers,
            seconds=round(seconds, 2),
            speedup=round(base / seconds, 2),
            cores=cores,
            microseconds_per_output=cost,
            worker_peak_mib="",
            task_bytes="",
        )
        first = f"| {n:,} " if label else ""
        print(f"{first}| {workers} | {seconds:.1f} | {base / seconds:.2f} |", flush=True)


def parallel_benchmark(sizes=(10**6, 10**7, 10**8), scaling_sizes=(10**5, 10**6, 10**7)):
    """audit(..., workers=k): wall time with 1, 2, 4, ... workers (up to the cores) on a black box
    of about 20 us an output, at 10^5, 10^6 and 10^7 outputs per side; then the peak memory of a
    worker process against n, and the bytes one task of 10^6 outputs sends back."""
    import os
    import subprocess
    import sys

    cores = os.cpu_count() or 1
    counts = [1] + [k for k in (2, 4, 8, 16, 32, 64) if k <= cores]
    rounds, cost = calibrated_rounds(20.0)
    print(f"\n# audit(..., workers=k): a black box of {cost:.0f} us an output ({rounds} rounds), {cores} cores")
    print("| n per side | workers | time (s) | speed-up |")
    print("|---:|---:|---:|---:|")
    probe = _SCALING_PROBE.format(here=str(Path(__file__).resolve().parent))
    for n in scaling_sizes:
        timed_in_tasks("scaling", probe, n, counts, cores, extra=(rounds,), cost=round(cost, 1))
    library_scaling(counts, cores)
    print("\n# peak memory of a worker process (RSS) against n per side, and the bytes of one task's counts")
    print("| n per side | worker peak (MiB) | bytes per task |")
    print("|---:|---:|---:|")
    probe = _MEMORY_PROBE.format(here=str(Path(__file__).resolve().parent))
    for n in sizes:
        out = subprocess.run([sys.executable, "-c", probe, str(n)], capture_output=True, text=True, check=True)
        peak_kib, task_bytes = (int(v) for v in out.stdout.split())
        record(
            "parallel",
            part="memory",
            n=n,
            workers=2,
            seconds="",
            speedup="",
            cores=cores,
            microseconds_per_output="",
            worker_peak_mib=round(peak_kib / 1024, 1),
            task_bytes=task_bytes,
        )
        print(f"| {n:,} | {peak_kib / 1024:.0f} | {task_bytes:,} |", flush=True)


def finite_sample_benchmark(seed=20261203):
    """Seconds per finite-sample bound (four orders, both directions) beside the delta method's."""
    from renyi.mechanisms import ADJACENT_PAIR, MECHANISMS
    from renyi.sweeps.discrete_laws import LAWS

    rng = np.random.default_rng(seed)
    orders = [2.0, 10.0, 50.0, 100.0]
    x, x_prime = ADJACENT_PAIR
    cases = {
        "binary_rr": lambda n: (LAWS["binary_rr"].sample_p(n, rng), LAWS["binary_rr"].sample_q(n, rng)),
        "geometric": lambda n: (LAWS["geometric"].sample_p(n, rng), LAWS["geometric"].sample_q(n, rng)),
        "randomized_response": lambda n: (
            MECHANISMS["randomized_response"].sample(x, n, rng),
            MECHANISMS["randomized_response"].sample(x_prime, n, rng),
        ),
    }
    print("\n# finite-sample bound against the delta method, same outputs, orders 2-100, both directions")
    print("| law | n per side | delta (s) | finite-sample (s) | finite-sample / delta | cells |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, draw in cases.items():
        for n in (10_000, 1_000_000):
            p, q = draw(n)
            support = [0, 1] if name == "binary_rr" else None
            t_delta, _ = measure(lambda a, b: rdp_lower_bound(a, b, orders, discrete=True), p, q, 3)
            fs = rdp_lower_bound(p, q, orders, method="finite-sample", support=support)
            t_fs, _ = measure(
                lambda a, b, s=support: rdp_lower_bound(a, b, orders, method="finite-sample", support=s), p, q, 3
            )
            record(
                "finite_sample",
                law=name,
                n=n,
                delta_seconds=t_delta,
                finite_sample_seconds=t_fs,
                finite_sample_over_delta=t_fs / t_delta,
                cells=fs[0].cells,
            )
            print(f"| {name} | {n:,} | {t_delta:.3f} | {t_fs:.3f} | {t_fs / t_delta:.1f} | {fs[0].cells} |", flush=True)


def projection_benchmark(seed=20261204):
    """Seconds and peak traced memory of one bound on (n, d) outputs: a learned projection, or the grid.

    Gaussian vectors at n = 10^6 per side for every route; the grid also on heavy-tailed
    (Laplace) noise at n = 10^5, whose wider spread asks for more nodes.
    """
    rng = np.random.default_rng(seed)
    print("\n# rdp_lower_bound(..., projection=...), orders 2 and 5, both directions")
    print("| noise | d | n per side | projection | seconds | peak memory / input | peak MiB |")
    print("|---|---:|---:|---|---:|---:|---:|")
    cases = [("gaussian", d, 1_000_000) for d in (2, 3, 10, 100)] + [("laplace", d, 100_000) for d in (2, 3)]
    for noise, d, n in cases:
        shift = np.zeros(d)
        shift[0] = 1.0
        draw = rng.normal if noise == "gaussian" else rng.laplace
        scale = 10**0.5 if noise == "gaussian" else 5**0.5  # variance 10 either way
        x, y = draw(0, scale, (n, d)) + shift, draw(0, scale, (n, d))
        routes = (
            ("grid",)
            if noise == "laplace"
            else ("grid", "auto")
            if d <= 3
            else ("mean-difference", "whitened", "likelihood-ratio", "auto")
        )
        for kind in routes:
            t, mem = measure(lambda a, b, k=kind: rdp_lower_bound(a, b, [2.0, 5.0], projection=k), x, y, 1)
            mib = mem * (x.nbytes + y.nbytes) / 2**20
            record(
                "projection",
                noise=noise,
                d=d,
                n=n,
                projection=kind,
                seconds=t,
                peak_memory_over_input=mem,
                peak_mib=mib,
            )
            print(f"| {noise} | {d} | {n:,} | {kind} | {t:.2f} | {mem:.3f} | {mib:.0f} |", flush=True)
        del x, y


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e4, 1e5, 1e6, 1e7, 1e8])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-lift", action="store_true", help="skip the Part II timings")
    parser.add_argument("--only-lift", action="store_true", help="only the Part II timings")
    parser.add_argument("--only-parallel", action="store_true", help="only audit(..., workers=k)")
    parser.add_argument("--only-finite-sample", action="store_true", help="only the finite-sample bound's timings")
    parser.add_argument("--only-projection", action="store_true", help="only vector outputs (projections, grid)")
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder for the CSV tables (benchmarks/results)")
    args = parser.parse_args(argv)
    if args.only_lift:
        lift_benchmark()
        write_results(args.results, machine_too=False)
        return
    if args.only_projection:
        projection_benchmark()
        write_results(args.results, machine_too=False)
        return
    if args.only_finite_sample:
        finite_sample_benchmark()
        write_results(args.results, machine_too=False)
        return
    if args.only_parallel:
        parallel_benchmark()
        write_results(args.results, machine_too=False)
        return
    pipelines = {
        "renyi": renyi_pipeline,
        "renyi-exact-tails": renyi_exact_tails_pipeline,
        "kdepy": kdepy_pipeline,
        "statsmodels": statsmodels_pipeline,
        "scipy": scipy_pipeline,
        "bincount": bincount_floor,
    }
    rng = np.random.default_rng(20261129)
    print(
        f"# rdp_lower_bound, three orders, both directions, Gaussian mechanism (b=5); "
        f"{platform.processor() or platform.machine()}, numpy {np.__version__}"
    )
    print("| n per side | pipeline | time (s) | renyi / this | peak memory / input |")
    print("|---:|---|---:|---:|---:|")
    for n in (int(s) for s in args.sizes):
        x, y = rng.normal(1, 5, n), rng.normal(0, 5, n)
        base = None
        for name, fn in pipelines.items():
            if (name == "scipy" and n > 10_000) or (name == "renyi-exact-tails" and n > 10**7):
                continue
            repeat = 1 if n >= 10**7 else args.repeat
            t, mem = measure(fn, x, y, repeat)
            base = t if base is None else base
            record("audit", n=n, pipeline=name, seconds=t, renyi_over_this=base / t, peak_memory_over_input=mem)
            print(f"| {n:,} | {name} | {t:.3f} | {base / t:.2f} | {mem:.2f} |", flush=True)
        del x, y
    tail_accuracy()
    cli_benchmark()
    chunked_benchmark()
    parallel_benchmark()
    finite_sample_benchmark()
    projection_benchmark()
    if not args.skip_lift:
        lift_benchmark()
    write_results(args.results)


if __name__ == "__main__":
    main()
