"""A user's black box that fails, in every way we know of: one line, exit 1, nothing left running.

Each case runs ``python -m renyi audit-mechanism`` (in this process through ``main``, or as a
real subprocess where signals and process trees matter) on a module of black boxes written
here, and checks the exit status, the words of the message, that standard output is empty or
a parseable report, and (for Ctrl-C) that no process is left behind.
"""

import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

import numpy as np
import pytest
from renyi.audit import audit, engines
from renyi.audit.parallel import default_chunk
from renyi.cli import main

BOXES = """
import os, sys, time
import numpy as np

def good(database, n, rng):
    return float(np.sum(database)) + rng.normal(0.0, 5.0, n)

def loud(database, n, rng):
    print("hello from the box")
    return float(np.sum(database)) + rng.normal(0.0, 5.0, n)

def raises(database, n, rng):
    raise OSError("the service is down")

def wrong(database, n, rng):
    return rng.normal(size=n - 1)

def scalar(database, n, rng):
    return 1.0

def infinite(database, n, rng):
    x = rng.normal(size=n)
    x[3] = np.inf
    return x

def exits(database, n, rng):
    sys.exit(3)

def interrupts(database, n, rng):
    raise KeyboardInterrupt

def dies(database, n, rng):
    os._exit(9)

def complex_(database, n, rng):
    return rng.normal(size=n) + 1j

def vectors(database, n, rng):
    return rng.normal(size=(n, 3))

def shapeshift(database, n, rng):
    return rng.normal(size=n) if n > 5000 else rng.normal(size=(n, 2))

def slow(database, n, rng):
    time.sleep(0.5)
    return rng.normal(0.0, 5.0, n)

def hangs(database, n, rng):
    time.sleep(120)

def half_written(database, n, rng):
    # A worker ended while it sends a result: the header of a 1 MiB message, one byte of it.
    import gc, multiprocessing.queues, struct
    results = next(o for o in gc.get_objects() if type(o) is multiprocessing.queues.SimpleQueue)
    os.write(results._writer.fileno(), struct.pack("!i", 1 << 20) + b"x")
    time.sleep(120)

_STATE = np.random.default_rng(0)

def stateful(database, n, rng):
    time.sleep(0.2)  # slow enough that both workers take tasks
    return float(np.sum(database)) + _STATE.normal(0.0, 5.0, n)  # ignores rng: not allowed

def rr(database, n, rng):
    keep = np.e / (1 + np.e)  # binary randomized response, epsilon_0 = 1
    bit = int(np.sum(database))
    return np.where(rng.random(n) < keep, bit, 1 - bit)


def plane(database, n, rng):
    out = rng.normal(0.0, 2.0, (n, 2))
    out[:, 0] += float(np.sum(database))
    return out


def features(database, n, rng):
    out = rng.normal(0.0, 2.0, (n, 6))
    out[:, 0] += float(np.sum(database))
    return out


lam = lambda database, n, rng: rng.normal(size=n)
"""


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A folder with the black boxes and the two databases, on sys.path and as the cwd."""
    (tmp_path / "boxes.py").write_text(BOXES)
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    (tmp_path / "x.json").write_text("[1]")
    (tmp_path / "x2.json").write_text("[0]")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def run(capfd, box, *extra, n="2e4"):
    argv = ["audit-mechanism", box, "--database", "x.json", "--neighbour", "x2.json", "-n", n]
    status = main([*argv, "--orders", "2", "--quiet", *extra])
    out, err = capfd.readouterr()
    return status, out, err


def one_line_error(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("renyi: error: ") and "Traceback" not in err
    return err


@pytest.mark.xdist_group("processes")  # starts worker processes: one such test at a time
@pytest.mark.slow
@pytest.mark.parametrize(
    "box,workers,words",
    [
        ("raises", "2", "failed: OSError: the service is down"),
        ("wrong", "2", "failed: the mechanism returned 4,095 outputs for this task where 4,096 were asked for"),
        ("scalar", "2", "failed: the mechanism returned a scalar"),
        ("infinite", "2", "failed: the mechanism's outputs for this task contain NaN or infinite values"),
        ("complex_", "2", "failed: the mechanism returned complex outputs"),
        ("exits", "1", "failed: the black box called sys.exit(3)"),
        ("exits", "2", "failed: the black box called sys.exit(3)"),
        ("interrupts", "1", "failed: the black box raised KeyboardInterrupt"),
        ("dies", "1", "failed: a worker process died"),
        ("dies", "2", "failed: a worker process died"),
    ],
)
def test_a_black_box_that_fails_a_task_is_one_line_naming_the_task(here, capfd, box, workers, words):
    status, out, err = run(capfd, f"boxes:{box}", "--workers", workers)
    assert status == 1 and out == ""  # not 3 ("refuted") for sys.exit(3), not 130 for its Ctrl-C
    assert one_line_error(err).startswith("renyi: error: task 0 (database, pilot, 4,096 outputs) ")
    assert words in err


@pytest.mark.parametrize(
    "args,words",
    [
        (["broken:f"], "cannot import 'broken' for the black box 'broken:f': SyntaxError"),
        (["./boxes.py:good"], "is a file path; name the module with dots, as Python imports it: 'boxes:good'"),
        (["boxes:lam", "--workers", "2"], "need a picklable black box"),
        (["boxes:vectors"], "vectors of d = 3 real values"),
        (["boxes:good", "-n", "1e12"], "make 2,000,002 tasks; an audit runs at most 100,000: pass a larger --chunk"),
    ],
)
def test_what_the_audit_refuses_before_drawing_is_one_line(here, capfd, args, words):
    box, *extra = args
    n = "2e4"
    if "-n" in extra:
        n = extra[extra.index("-n") + 1]
        extra = extra[: extra.index("-n")]
    status, out, err = run(capfd, box, *extra, n=n)
    assert status == 1 and out == ""
    assert words in one_line_error(err)


@pytest.mark.parametrize(
    "option,words",
    [
        (["--database", "."], "--database: . is a folder; give a JSON or .npy file"),
        (["--database", "deep.json"], "--database: cannot read deep.json: its JSON is nested too deeply"),
    ],
)
def test_an_unreadable_database_is_one_line(here, capfd, option, words):
    argv = ["audit-mechanism", "boxes:good", *option, "--neighbour", "x2.json", "-n", "2e4", "--orders", "2"]
    status = main(argv)
    out, err = capfd.readouterr()
    assert status == 1 and out == "" and words in one_line_error(err)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "x"])
def test_a_task_timeout_must_be_a_positive_number_of_seconds(here, capfd, value):
    with pytest.raises(SystemExit) as info:
        run(capfd, "boxes:good", f"--task-timeout={value}")
    err = capfd.readouterr().err
    assert info.value.code == 2 and "--task-timeout" in err and err.count("\n") == 1
    for bad in (0, -1.0, math.nan, "x"):
        with pytest.raises((TypeError, ValueError), match="task_timeout"):
            audit(np.random.default_rng, [1], [0], 100, 2.0, rng=np.random.default_rng(0), workers=1, task_timeout=bad)


@pytest.mark.xdist_group("processes")
@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_what_a_black_box_prints_goes_to_stderr_and_the_json_still_parses(here, capfd, workers):
    status, out, err = run(capfd, "boxes:loud", "--json", "--workers", workers)
    assert status == 0
    bounds = json.loads(out)
    assert 0 < bounds[0]["lower"] <= 0.04  # epsilon(2) = 1/25 for scale 5
    assert "hello from the box" in err and "hello" not in out


@pytest.mark.xdist_group("processes")
@pytest.mark.slow
def test_a_shape_that_changes_after_the_pilot_is_refused(here, capfd):
    status, out, err = run(capfd, "boxes:shapeshift", "--pilot", "6000", "--chunk", "6000", n="1e5")
    assert status == 1 and out == ""
    assert "failed: outputs of shape (n, 2), where the pilot's were (n,)" in one_line_error(err)


@pytest.mark.xdist_group("processes")
@pytest.mark.slow
def test_a_task_timeout_holds_with_one_worker_and_for_the_pilot(here, capfd):
    started = time.monotonic()
    status, out, err = run(capfd, "boxes:hangs", "--task-timeout", "3")
    assert status == 1 and out == ""
    assert "task 0 (database, pilot, 4,096 outputs) did not finish within 3 s" in one_line_error(err)
    assert time.monotonic() - started < 30  # not the two minutes the black box sleeps


@pytest.fixture
def silent_server():
    """A TCP server that accepts connections and never says a word (not a Dask scheduler)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    held = []

    def serve():
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=serve, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()
    for conn in held:
        conn.close()


def test_a_scheduler_that_does_not_answer_fails_within_the_connect_timeout(here, capfd, silent_server, monkeypatch):
    pytest.importorskip("dask.distributed")
    monkeypatch.setattr(engines, "CONNECT_TIMEOUT", 2.0)
    started = time.monotonic()
    status, out, err = run(capfd, "boxes:good", "--scheduler", silent_server)
    assert status == 1 and out == "" and time.monotonic() - started < 10
    assert f"no Dask scheduler answered at '{silent_server}' within 2 s" in one_line_error(err)
    with socket.socket() as probe:  # a port where nobody listens
        probe.bind(("127.0.0.1", 0))
        closed = f"tcp://127.0.0.1:{probe.getsockname()[1]}"
    status, out, err = run(capfd, "boxes:good", "--scheduler", closed)
    assert status == 1 and f"cannot reach a Dask scheduler at '{closed}'" in one_line_error(err)


def _processes_with(mark: str) -> list[int]:
    """Every process whose environment holds ``mark`` (a CLI run and the workers it started)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/environ", "rb") as env:
                    if mark.encode() in env.read():
                        found.append(int(pid))
            except OSError:
                pass
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.xdist_group("processes")
@pytest.mark.slow
def test_a_worker_ended_halfway_through_sending_a_result_does_not_hang_the_audit(here):
    """The executor's thread then waits for the rest of the message, and the interpreter for
    that thread: the hang behind an intermittent Ctrl-C failure (a worker killed mid-send)."""
    mark = uuid.uuid4().hex
    cmd = [sys.executable, "-m", "renyi", "audit-mechanism", "boxes:half_written", "--database", "x.json"]
    cmd += ["--neighbour", "x2.json", "-n", "1e5", "--orders", "2", "--quiet", "--workers", "2"]
    cmd += ["--task-timeout", "2"]
    env = {**os.environ, "RENYI_TEST_MARK": mark, "PYTHONPATH": str(here)}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        _, err = proc.communicate(timeout=40)
    except subprocess.TimeoutExpired:
        for pid in _processes_with(mark):
            os.kill(pid, signal.SIGKILL)
        proc.communicate()
        raise
    assert proc.returncode == 1 and "did not finish within 2 s (task_timeout)" in one_line_error(err)
    assert _processes_with(mark) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.xdist_group("processes")
@pytest.mark.slow
def test_ctrl_c_exits_130_within_two_seconds_and_leaves_no_process(here, sigint_default):
    """Six runs, not one: the failure this guards against (a hang, a zombie) was intermittent."""
    for workers in ("2", "1", "2", "3", "2", "1"):
        mark = uuid.uuid4().hex
        cmd = [sys.executable, "-m", "renyi", "audit-mechanism", "boxes:slow", "--database", "x.json"]
        cmd += ["--neighbour", "x2.json", "-n", "1e6", "--orders", "2", "--quiet", "--workers", workers]
        env = {**os.environ, "RENYI_TEST_MARK": mark, "PYTHONPATH": str(here)}
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=sigint_default
        )
        time.sleep(3)
        running = _processes_with(mark)
        assert len(running) >= 2, running  # the CLI and at least one worker: the check below can fail
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            for pid in _processes_with(mark):  # the CLI and its workers, not later tests' problem
                os.kill(pid, signal.SIGKILL)
            proc.communicate()
            raise
        assert time.monotonic() - sent < 2.0, f"{workers} workers: exit took {time.monotonic() - sent:.1f} s"
        assert proc.returncode == 130 and "interrupted after" in err and "Traceback" not in err
        deadline = time.monotonic() + 1.0
        while _processes_with(mark) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _processes_with(mark) == [], f"{workers} workers: processes left behind"


@pytest.mark.xdist_group("processes")
def test_a_ctrl_c_while_a_worker_starts_leaves_no_worker_behind(here, monkeypatch):
    """The executor starts a worker, then records it; a Ctrl-C between the two (sent here at
    that point, on every start) must still end every worker.  An unrecorded worker is one the
    interpreter waits for at exit: the CLI hung."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import boxes

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    start = ProcessPoolExecutor._spawn_process

    def start_then_ctrl_c(pool):
        process = pool._mp_context.Process(
            target=start.__globals__["_process_worker"],
            args=(pool._call_queue, pool._result_queue, pool._initializer, pool._initargs, pool._max_tasks_per_child),
        )
        process.start()
        os.kill(os.getpid(), signal.SIGINT)
        pool._processes[process.pid] = process

    monkeypatch.setattr(ProcessPoolExecutor, "_spawn_process", start_then_ctrl_c)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt, match="interrupted after 0 of"):
            audit(boxes.slow, [1], [0], 10**5, 2.0, rng=np.random.default_rng(0), workers=2, discrete=False)
    finally:
        signal.signal(signal.SIGINT, previous)
        left = multiprocessing.active_children()
        for process in left:
            process.kill()
            process.join()
    assert left == []


def test_the_default_chunk_depends_on_n_alone():
    """About 32 tasks a sample, between 4,096 and 10^6 outputs (hand-computed)."""
    assert [default_chunk(n) for n in (10**4, 10**5, 10**6, 10**7, 10**9)] == [4_096, 4_096, 31_250, 312_500, 10**6]


def test_a_task_list_too_long_to_build_is_refused_at_once():
    started = time.monotonic()
    with pytest.raises(ValueError, match="make 2,000,002 tasks"):
        audit(np.random.default_rng, [1], [0], 10**12, 2.0, rng=np.random.default_rng(0), workers=1)
    assert time.monotonic() - started < 5


@pytest.mark.xdist_group("processes")
@pytest.mark.slow
def test_bounds_are_the_same_on_any_number_of_workers_only_for_a_pure_black_box(here):
    """The contract of renyi.audit.black_box: all randomness from rng.  A black box with its own
    generator breaks it (the bound then depends on which worker drew what), a pure one does not."""
    import boxes

    def bounds(box, workers):
        return audit(box, [1], [0], 40_000, 2.0, rng=np.random.default_rng(5), workers=workers, discrete=False)

    assert bounds(boxes.good, 1) == bounds(boxes.good, 2)  # the default chunk: 10 tasks a side
    assert bounds(boxes.stateful, 1) != bounds(boxes.stateful, 2)


@pytest.mark.xdist_group("processes")
@pytest.mark.slow
def test_audit_mechanism_runs_the_finite_sample_and_the_vector_routes(here, capfd):
    """The three routes through the CLI, against exact divergences: binary RR at epsilon_0 = 1
    (D_2 = 0.735), six Gaussian features of scale 2, one shifted by 1 (D_2 = 2 / 8 = 0.25), and
    two such coordinates on the grid (the same D_2)."""
    status, out, err = run(capfd, "boxes:rr", "--finite-sample", "--support", "0:1", "--json", n="1e5")
    assert status == 0, err
    bound = json.loads(out)[0]
    assert bound["method"] == "finite-sample" and 0.6 < bound["lower"] <= 0.7354
    status, out, err = run(capfd, "boxes:rr", "--finite-sample", "--claim-epsilon", "0.2", n="1e5")
    assert status == 3  # a claim of epsilon(2) = 0.2 for RR at epsilon_0 = 1 is refuted
    status, out, err = run(capfd, "boxes:features", "--projection", "mean-difference", "--json", n="1e5")
    assert status == 0, err
    bound = json.loads(out)[0]
    assert bound["projection"]["kind"] == "mean-difference (pilot)" and 0.15 < bound["lower"] <= 0.25
    status, out, err = run(capfd, "boxes:plane", "--projection", "grid", "--json", n="1e5")
    assert status == 0, err  # two Gaussian coordinates of scale 2, one shifted by 1: D_2 = 0.25
    bound = json.loads(out)[0]
    assert bound["projection"]["kind"] == "grid" and 0.15 < bound["lower"] <= 0.25
    status, out, err = run(capfd, "boxes:good", "--support", "0:1")
    assert status == 1 and "--support belongs to --finite-sample" in one_line_error(err)
