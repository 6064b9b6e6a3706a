"""audit(..., workers=k): outputs drawn in tasks, each once, counts merged; against independent fits."""

import math
import os

import numpy as np
import pytest
from renyi.audit import audit, rdp_lower_bound
from renyi.audit.bandwidth import default_bandwidth
from renyi.audit.counts import GridCounts, OutcomeCounts
from renyi.audit.density import linear_bin, smooth_counts
from renyi.audit.engines import TaskError
from renyi.audit.frequencies import relative_frequencies
from renyi.audit.mergeable import fit_from_counts, fit_from_outcomes
from renyi.mechanisms import ADJACENT_PAIR, MECHANISMS

X, X_PRIME = ADJACENT_PAIR


def normal_box(database, n, rng):
    """A black box of our own: Gaussian noise (scale 5) on the sum of the database."""
    return float(np.sum(database)) + rng.normal(0.0, 5.0, n)


def short_box(database, n, rng):
    return rng.normal(0.0, 1.0, n - 1 if n < 300 else n)


def nan_box(database, n, rng):
    out = rng.normal(0.0, 1.0, n)
    if n < 300:  # only the last task of each sample
        out[0] = np.nan
    return out


def hanging_box(database, n, rng):
    if n < 300:
        import time

        time.sleep(120)
    return rng.normal(0.0, 1.0, n)


def failing_box(database, n, rng):
    if n < 300:
        raise OSError("the service is down")
    return rng.normal(0.0, 1.0, n)


def test_counts_of_chunks_merge_to_the_counts_of_the_whole():
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 2.0, 50_000)
    dx = 0.013
    whole = GridCounts.of(x, dx)
    merged = GridCounts(dx)
    for part in reversed(np.array_split(x, 7)):  # any order
        merged.merge(GridCounts.of(part, dx))
    assert merged.n == whole.n == x.size
    assert merged.offset == whole.offset
    np.testing.assert_allclose(merged.counts, whole.counts, rtol=0, atol=1e-9)
    assert math.isclose(merged.counts.sum(), x.size, rel_tol=1e-12)


def test_the_fit_from_counts_is_the_in_memory_binned_kde_on_that_grid():
    """Independent route: density.linear_bin on the concatenated sample, with the grid's origin."""
    rng = np.random.default_rng(1)
    a, b = rng.normal(1.0, 5.0, 40_000), rng.normal(0.0, 5.0, 30_000)
    h = 0.4
    dx = h / 8
    cp, cq = GridCounts(dx), GridCounts(dx)
    for part in np.array_split(a, 3):
        cp.merge(GridCounts.of(part, dx))
    for part in np.array_split(b, 5):
        cq.merge(GridCounts.of(part, dx))
    fit = fit_from_counts(cp, cq, h, 5.0)
    pad = math.ceil(8 * h / dx)
    start = min(cp.offset, cq.offset) - pad
    lo = start * dx
    counts = np.stack([linear_bin(a, lo, dx, fit.cells) / a.size, linear_bin(b, lo, dx, fit.cells) / b.size])
    p, q = smooth_counts(counts, dx, h)
    np.testing.assert_allclose(fit.p, p, rtol=1e-9, atol=1e-12 * p.max())
    np.testing.assert_allclose(fit.q, q, rtol=1e-9, atol=1e-12 * q.max())
    assert (fit.n_p, fit.n_q, fit.bandwidth, fit.discrete) == (40_000, 30_000, h, False)


@pytest.mark.parametrize("shape", ["scalars", "rows"])
def test_outcome_counts_give_the_relative_frequencies(shape):
    rng = np.random.default_rng(2)
    size = (9_000,) if shape == "scalars" else (9_000, 3)
    a, b = rng.integers(0, 4, size), rng.integers(0, 3, size)
    cp, cq = OutcomeCounts({}), OutcomeCounts({})
    for part in np.array_split(a, 4):
        cp.merge(OutcomeCounts.of(part))
    for part in np.array_split(b, 2):
        cq.merge(OutcomeCounts.of(part))
    fit = fit_from_outcomes(cp, cq)
    ref = relative_frequencies(a, b)

    def by_outcome(outcomes, p, q):
        keys = [tuple(o) if np.ndim(o) else o.item() for o in outcomes]
        return dict(zip(keys, zip(p.tolist(), q.tolist())))

    values = sorted(set(cp.counts) | set(cq.counts))
    assert by_outcome(np.array(values), fit.p, fit.q) == by_outcome(ref.outcomes, ref.p, ref.q)


def test_each_output_is_drawn_once_in_tasks_of_at_most_chunk():
    calls = []

    def counting(database, n, rng):
        calls.append(n)
        return rng.normal(0.0, 5.0, n)

    audit(
        counting,
        X,
        X_PRIME,
        25_000,
        2.0,
        rng=np.random.default_rng(3),
        workers=1,
        chunk=4_000,
        pilot=3_000,
        discrete=False,
    )
    assert sum(calls) == 50_000 and max(calls) <= 4_000
    assert calls[:2] == [3_000, 3_000]  # the pilots first, counted in the sample


def test_the_pilot_bandwidth_is_the_in_memory_rule_up_to_the_pilots_sampling_error():
    rng = np.random.default_rng(4)
    fit_bound = audit(normal_box, X, X_PRIME, 400_000, 2.0, rng=rng, workers=1, discrete=False)
    a = normal_box(X, 400_000, np.random.default_rng(5))
    b = normal_box(X_PRIME, 400_000, np.random.default_rng(6))
    assert fit_bound.bandwidth == pytest.approx(default_bandwidth(a, b), rel=0.01)


@pytest.mark.parametrize(
    "box,fragment",
    [(short_box, "returned 249 outputs"), (nan_box, "NaN"), (failing_box, "OSError: the service is down")],
)
def test_a_failing_task_is_named_in_one_line(box, fragment):
    with pytest.raises(TaskError, match="task") as info:
        audit(
            box,
            X,
            X_PRIME,
            2_250,
            2.0,
            rng=np.random.default_rng(7),
            workers=1,
            chunk=1_000,
            pilot=1_000,
            discrete=False,
        )
    assert fragment in str(info.value) and "\n" not in str(info.value)


def count_box(database, n, rng):
    """Discrete outputs: a Binomial count (integers)."""
    return rng.binomial(3 + int(np.sum(database)), 0.5, n)


def test_workers_need_a_seed_and_infer_the_kind_from_the_pilots():
    with pytest.raises(TypeError, match="rng"):
        audit(normal_box, X, X_PRIME, 1_000, 2.0, workers=1, discrete=False)
    with pytest.raises(ValueError, match="workers"):
        audit(normal_box, X, X_PRIME, 1_000, 2.0, rng=np.random.default_rng(0), workers=0, discrete=False)
    for box, kind in ((normal_box, False), (count_box, True)):
        kw = dict(rng=None, workers=1, chunk=3_000, pilot=5_000)
        inferred = audit(box, X, X_PRIME, 20_000, 2.0, **{**kw, "rng": np.random.default_rng(3)})
        told = audit(box, X, X_PRIME, 20_000, 2.0, discrete=kind, **{**kw, "rng": np.random.default_rng(3)})
        assert inferred == told
        assert (inferred.bandwidth is None) == kind  # a KDE only for the real-valued box


@pytest.mark.xdist_group("processes")  # starts worker processes: one such test at a time
@pytest.mark.slow
@pytest.mark.parametrize("name", ["gaussian", "randomized_response"])
def test_two_worker_processes_give_the_bound_of_one(name):
    """Real processes (spawn): the same tasks and seeds, the same LowerBound, to the bit."""
    mech = MECHANISMS[name]
    kw = dict(rng=None, chunk=60_000, pilot=20_000)
    one = audit(mech, X, X_PRIME, 200_000, [2.0, 5.0], workers=1, **{**kw, "rng": np.random.default_rng(8)})
    two = audit(mech, X, X_PRIME, 200_000, [2.0, 5.0], workers=2, **{**kw, "rng": np.random.default_rng(8)})
    assert one == two
    assert all(b.lower <= mech.target(b.order) for b in one)


@pytest.mark.xdist_group("processes")  # starts worker processes: one such test at a time
@pytest.mark.slow
def test_a_failing_task_in_a_worker_stops_the_audit():
    with pytest.raises(TaskError, match="OSError: the service is down"):
        audit(
            failing_box,
            X,
            X_PRIME,
            2_250,
            2.0,
            rng=np.random.default_rng(9),
            workers=2,
            chunk=1_000,
            pilot=1_000,
            discrete=False,
        )


@pytest.mark.slow
def test_coverage_with_a_pilot_is_that_of_the_in_memory_bound():
    """200 audits of the Gaussian mechanism (eps(2) = 0.04) at 20,000 per side in tasks."""
    gauss = MECHANISMS["gaussian"]
    rng = np.random.default_rng(10)
    covered = sum(
        audit(gauss, X, X_PRIME, 20_000, 2.0, rng=rng, workers=1, chunk=6_000, pilot=4_000).lower <= gauss.target(2)
        for _ in range(200)
    )
    assert covered >= 0.93 * 200


@pytest.mark.xdist_group("processes")  # starts worker processes: one such test at a time
@pytest.mark.slow
def test_a_dask_cluster_of_two_worker_processes_gives_the_bound_of_one_process():
    """A real LocalCluster (two worker processes, no mock): the same tasks, seeds and bound."""
    if os.environ.get("RENYI_REQUIRE_OPTIONAL"):  # set by `make unit`, which installs the extra
        import dask.distributed as distributed
    else:
        distributed = pytest.importorskip("dask.distributed")
    gauss = MECHANISMS["gaussian"]
    kw = dict(chunk=60_000, pilot=20_000)
    here = audit(gauss, X, X_PRIME, 200_000, [2.0, 5.0], rng=np.random.default_rng(11), workers=1, **kw)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        there = audit(gauss, X, X_PRIME, 200_000, [2.0, 5.0], rng=np.random.default_rng(11), scheduler=client, **kw)
        by_address = audit(
            gauss, X, X_PRIME, 200_000, 2.0, rng=np.random.default_rng(11), scheduler=cluster.scheduler_address, **kw
        )
    assert here == there
    assert by_address == here[0]


@pytest.mark.slow
def test_a_black_box_by_name_from_the_command_line(tmp_path):
    """python -m renyi audit-mechanism package.module:function: the bound, the claim, exit 3."""
    import json
    import subprocess
    import sys

    (tmp_path / "mybox.py").write_text(
        "import numpy as np\n\n\ndef noisy_sum(database, n, rng):\n"
        "    return float(np.sum(database)) + rng.normal(0.0, 5.0, n)\n"
    )
    (tmp_path / "x.json").write_text("[1, 0, 0]")
    (tmp_path / "x2.json").write_text("[0, 0, 0]")
    cmd = [sys.executable, "-m", "renyi", "audit-mechanism", "mybox:noisy_sum", "--database", "x.json"]
    cmd += ["--neighbour", "x2.json", "-n", "2e5", "--orders", "2", "--continuous", "--json", "--claim-epsilon", "0.01"]
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert done.returncode == 3, done.stderr
    out = json.loads(done.stdout)
    assert out["verdict"]["refuted"] and 0 < out["bounds"][0]["lower"] <= 0.04  # epsilon(2) = 1/25 for sigma 5
    bad = subprocess.run([*cmd[:4], "nosuchmodule:f", *cmd[5:]], cwd=tmp_path, capture_output=True, text=True)
    assert bad.returncode == 1 and "cannot import 'nosuchmodule'" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.xdist_group("processes")  # starts worker processes: one such test at a time
@pytest.mark.slow
def test_a_hanging_task_stops_the_audit_and_leaves_no_worker_running():
    import multiprocessing
    import time

    started = time.monotonic()
    with pytest.raises(TaskError, match=r"task 3 \(database, 250 outputs\) did not finish within 5 s"):
        audit(
            hanging_box,
            X,
            X_PRIME,
            2_250,
            2.0,
            rng=np.random.default_rng(12),
            workers=2,
            chunk=1_000,
            pilot=1_000,
            discrete=False,
            task_timeout=5,
        )
    assert time.monotonic() - started < 60  # not the two minutes the black box sleeps
    deadline = time.monotonic() + 10
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not multiprocessing.active_children()


@pytest.mark.xdist_group("processes")  # starts worker processes: one such test at a time
@pytest.mark.slow
def test_ctrl_c_says_how_many_outputs_were_drawn(tmp_path, sigint_default):
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "slowbox.py").write_text(
        "import time\n\nimport numpy as np\n\n\ndef slow(database, n, rng):\n"
        "    time.sleep(0.5)\n    return rng.normal(0.0, 5.0, n)\n"
    )
    (tmp_path / "x.json").write_text("[1]")
    (tmp_path / "x2.json").write_text("[0]")
    cmd = [sys.executable, "-m", "renyi", "audit-mechanism", "slowbox:slow", "--database", "x.json", "--neighbour"]
    cmd += ["x2.json", "-n", "1e6", "--chunk", "20000", "--orders", "2", "--continuous", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=sigint_default
    )
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    drawn = int(err.split("interrupted after ")[1].split(" of ")[0].replace(",", ""))
    assert 0 < drawn < 2_000_000 and "of 2,000,000 outputs were drawn" in err and "Traceback" not in err


# ---------------------------------------------------------------- vector outputs in tasks

SHIFT, SIGMA, D = 1.0, 4.0, 5


def vector_box(database, n, rng):
    """Gaussian noise (scale 4) on d = 5 coordinates, the first shifted by the database's sum."""
    out = rng.normal(0.0, SIGMA, (n, D))
    out[:, 0] += float(np.sum(database))
    return out


def exact_vector_epsilon(order):
    """D_lambda of N(mu, s^2 I) against N(0, s^2 I): lambda |mu|^2 / (2 s^2), any projection at most it."""
    return order * SHIFT**2 / (2 * SIGMA**2)


def test_vector_outputs_in_tasks_learn_the_direction_on_the_pilot_and_hold_it_out():
    bounds = audit(
        vector_box,
        [1],
        [0],
        120_000,
        [2.0, 5.0],
        rng=np.random.default_rng(21),
        workers=1,
        projection="mean-difference",
    )
    pilot = 60_000  # the default for a learned direction: half the smaller sample
    for b in bounds:
        assert b.projection["kind"] == "mean-difference (pilot)" and b.projection["held_out"] == [pilot, pilot]
        assert b.n_p == b.n_q == 120_000 - pilot
        assert 0.5 * exact_vector_epsilon(b.order) < b.lower <= exact_vector_epsilon(b.order)
        assert b.projection["signal_share"] > 0.9  # the learned direction is nearly e_1
    fixed = audit(
        vector_box, [1], [0], 120_000, 2.0, rng=np.random.default_rng(21), workers=1, projection=[1, 0, 0, 0, 0]
    )
    assert fixed.projection["kind"] == "fixed" and fixed.n_p == 120_000 and fixed.projection["held_out"] == [0, 0]
    # an independent estimate: the one-process route on other outputs, same direction
    here = audit(vector_box, [1], [0], 120_000, 2.0, rng=np.random.default_rng(22), projection=[1, 0, 0, 0, 0])
    assert abs(fixed.estimate - here.estimate) < 4 * math.hypot(fixed.std_error, here.std_error)


def test_vector_tasks_hold_at_most_task_bytes_of_rows():
    from renyi.audit import parallel

    sizes = []

    def wide(database, n, rng):
        sizes.append(n)
        out = rng.normal(0.0, 1.0, (n, 2_000))
        out[:, 0] += float(np.sum(database))
        return out

    audit(wide, [1], [0], 20_000, 2.0, rng=np.random.default_rng(23), workers=1, projection="mean-difference")
    rows = parallel.TASK_BYTES // (8 * 2_000)
    assert max(sizes) <= max(rows, parallel.MIN_CHUNK) and sum(sizes) == 40_000


def test_row_moments_of_chunks_add_up_to_those_of_the_whole():
    from renyi.audit.counts import RowMoments

    rng = np.random.default_rng(24)
    rows = rng.normal(size=(1_000, 4))
    values = rows @ np.array([0.5, 0.5, 0.5, 0.5])
    merged = RowMoments()
    for part, v in zip(np.array_split(rows, 3), np.array_split(values, 3)):
        merged.merge(RowMoments.of(part, v))
    assert merged.n == 1_000
    np.testing.assert_allclose(merged.rows, rows.sum(axis=0), rtol=1e-12)
    assert merged.squared_norms == pytest.approx(float((rows**2).sum()), rel=1e-12)
    assert merged.projected_squares == pytest.approx(float((values**2).sum()), rel=1e-12)


def test_vector_outputs_in_tasks_are_refused_without_a_projection_and_with_split():
    kw = dict(rng=np.random.default_rng(25), workers=1)
    with pytest.raises(ValueError, match="pass projection="):
        audit(vector_box, [1], [0], 20_000, 2.0, **kw)
    with pytest.raises(ValueError, match="2 or 3 dimensions; the outputs have d = 5"):
        audit(vector_box, [1], [0], 20_000, 2.0, projection="grid", **kw)
    with pytest.raises(ValueError, match="drop bandwidth"):
        audit(vector_box, [1], [0], 20_000, 2.0, projection="grid", bandwidth=0.1, **kw)
    with pytest.raises(ValueError, match="drop split"):
        audit(vector_box, [1], [0], 20_000, 2.0, projection="whitened", split=0.5, **kw)
    with pytest.raises(ValueError, match="must be below n"):
        audit(vector_box, [1], [0], 20_000, 2.0, projection="whitened", pilot=20_000, **kw)


@pytest.mark.xdist_group("processes")
@pytest.mark.slow
def test_vector_outputs_give_the_same_bound_on_two_workers():
    kw = dict(rng=None, projection="whitened")
    one = audit(vector_box, [1], [0], 60_000, [2.0, 5.0], workers=1, **{**kw, "rng": np.random.default_rng(26)})
    two = audit(vector_box, [1], [0], 60_000, [2.0, 5.0], workers=2, **{**kw, "rng": np.random.default_rng(26)})
    assert one == two


def _wide_integers(database, n, rng):
    """Integers so many that almost every output is new: real values in disguise."""
    return rng.integers(0, 10**9, n) + int(np.sum(database))


def _real_rows(database, n, rng):
    return rng.normal(size=(n, 3))


def test_both_routes_infer_the_kind_by_the_same_two_rules():
    """One rule each, shared: real rows need a projection; inferred outcomes that are mostly
    unique (more than half the smaller sample, from 20 outputs on) are real values.  The
    boundary by hand: 10 distinct outcomes in 20 outputs pass, 11 do not."""
    from renyi.audit import fit_densities
    from renyi.audit.density_fit import mostly_unique, real_vectors

    assert not mostly_unique(10, 20) and mostly_unique(11, 20) and not mostly_unique(19, 19)
    assert real_vectors(np.zeros((4, 2))) and not real_vectors(np.zeros((4, 2), dtype=int))
    assert not real_vectors(np.zeros((4, 1)))
    fit_densities(np.arange(20) % 10, np.arange(20) % 10)
    with pytest.raises(ValueError, match="11 distinct outcomes"):
        fit_densities(np.arange(20) % 11, np.arange(20) % 11)
    for box, words in ((_wide_integers, "look continuous, not discrete"), (_real_rows, "vectors of d = 3")):
        rng = np.random.default_rng(0)
        with pytest.raises(ValueError, match=words):
            rdp_lower_bound(box([0], 2_000, rng), box([0], 2_000, rng), 2.0)
        with pytest.raises(ValueError, match=words):
            audit(box, [1], [0], 2_000, 2.0, rng=np.random.default_rng(0), workers=1)
