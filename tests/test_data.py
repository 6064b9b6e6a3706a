"""Shipped data: manifest hashes, presence, and a bit-exact recomputation of a slice."""

import hashlib
import json
import os
from pathlib import Path

import pytest

from renyi import experiments

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
MANIFEST = json.loads((DATA / "MANIFEST.json").read_text())
CHAPTER_FILES = ["part1/section4.csv", "part1/tuning.csv"]


@pytest.mark.parametrize("name", CHAPTER_FILES)
def test_chapter_data_present_and_listed(name):
    assert (DATA / name).is_file(), f"missing {name}: run `make data`"
    assert name in MANIFEST["files"]


@pytest.mark.parametrize("name", sorted(MANIFEST["files"]))
def test_manifest_hashes_and_provenance(name):
    entry = MANIFEST["files"][name]
    path = DATA / name
    assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"]
    assert path.stat().st_size == entry["bytes"]
    assert entry["root_seed"] == experiments.ROOT_SEED
    for key in ("command", "parameters", "spawn_scheme", "git_commit", "versions"):
        assert entry[key]
    assert set(entry["versions"]) >= {"python", "numpy", "scipy", "statsmodels"}


def _shipped(sweep, **match):
    rows = experiments.read_rows(DATA / "part1" / f"{sweep}.csv")
    return [r for r in rows if all(r[k] == v for k, v in match.items())]


@pytest.mark.parametrize("mechanism,n", [("gaussian", 1000), ("randomized_response", 3000),
                                         ("shuffled_randomized_response", 1000), ("noisy_gradient_descent", 1000)])
def test_recompute_section4_slice_bit_for_bit(mechanism, n):
    task = next(t for t in experiments.tasks_for("section4", sizes=[n], mechanisms=[mechanism]) if t.block == 0)
    task = experiments.Task(task.sweep, task.mechanism, task.n, task.block, task.replicates[:3])
    fresh = experiments.run_task(task)
    shipped = [r for r in _shipped("section4", mechanism=mechanism, n=n) if r["replicate"] < 3]
    assert len(fresh) == len(shipped) == 9
    for a, b in zip(fresh, sorted(shipped, key=lambda r: (r["replicate"], r["order"]))):
        for key in ("estimate", "std_error", "bias", "lower", "target", "floor"):
            assert a[key] == pytest.approx(b[key], rel=1e-12, abs=1e-15), key


def test_recompute_tuning_slice():
    task = experiments.tasks_for("tuning", sizes=[10_000], mechanisms=["gaussian"])[0]
    task = experiments.Task(task.sweep, task.mechanism, task.n, task.block, task.replicates[:1])
    fresh = experiments.run_task(task)
    shipped = [r for r in _shipped("tuning", mechanism="gaussian", n=10_000) if r["replicate"] == 0]
    key = lambda r: (r["bandwidth_factor"], r["floor_factor"], r["beta_tau"], r["order"])
    shipped = {key(r): r for r in shipped}
    assert len(fresh) == len(shipped)
    for row in fresh:
        assert row["lower"] == pytest.approx(shipped[key(row)]["lower"], rel=1e-12, abs=1e-15)


def test_every_point_has_the_promised_replicates():
    rows = experiments.read_rows(DATA / "part1" / "section4.csv")
    counts = {}
    for r in rows:
        counts[(r["mechanism"], r["n"], r["order"])] = counts.get((r["mechanism"], r["n"], r["order"]), 0) + 1
    assert len(counts) == 7 * 8 * 3
    assert min(counts.values()) >= 100


def test_seeds_do_not_depend_on_workers(tmp_path):
    """Serial and a 2-process pool give identical files (streams are per task, not per worker)."""
    import concurrent.futures as cf
    kw = dict(sizes=[1000], mechanisms=["gaussian", "randomized_response"], replicates=4, progress=False)
    experiments.run_sweeps(tmp_path / "a", ("section4",), executor=None, **kw)
    with cf.ProcessPoolExecutor(2) as pool:
        experiments.run_sweeps(tmp_path / "b", ("section4",), executor=pool, **kw)
    assert (tmp_path / "a/part1/section4.csv").read_bytes() == (tmp_path / "b/part1/section4.csv").read_bytes()


def test_resume_skips_finished_tasks(tmp_path):
    kw = dict(sizes=[1000], mechanisms=["gaussian"], replicates=2, progress=False)
    experiments.run_sweeps(tmp_path, ("section4",), **kw)
    part = next((tmp_path / "part1/.parts").glob("*.csv"))
    part.write_text(part.read_text())  # untouched content, but we can detect recomputation via mtime
    before = part.stat().st_mtime_ns
    experiments.run_sweeps(tmp_path, ("section4",), **kw)
    assert part.stat().st_mtime_ns == before


def test_dask_executor_with_local_cluster(tmp_path):
    if os.environ.get("RENYI_REQUIRE_OPTIONAL"):  # set by `make unit`, which installs the extra
        import dask.distributed as distributed
    else:
        distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False) as cluster, \
            distributed.Client(cluster) as client:
        kw = dict(sizes=[1000], mechanisms=["gaussian"], replicates=2, progress=False)
        experiments.run_sweeps(tmp_path / "d", ("section4",), executor=client.get_executor(), **kw)
    experiments.run_sweeps(tmp_path / "s", ("section4",), **kw)
    assert (tmp_path / "d/part1/section4.csv").read_bytes() == (tmp_path / "s/part1/section4.csv").read_bytes()
