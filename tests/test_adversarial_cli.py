"""Odd inputs to the command lines: nothing lost, nothing hung, the verdict in the exit status.

Each case asserts its exact outcome: the exit status, the key words of the one-line message,
the bound's value (equal to the same data read from a plain file), and files left intact.
Pipes and FIFOs are real ones; every subprocess has a timeout that fails the test instead of
hanging it.
"""

import gzip
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from renyi.cli import main
from renyi.cli.samples_io import UserError, load_samples

TIMEOUT = 120


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    d = tmp_path_factory.mktemp("odd")
    rng = np.random.default_rng(2)
    p, q = rng.normal(1, 5, 5000), rng.normal(0, 5, 5000)
    np.savetxt(d / "p.txt", p)
    np.savetxt(d / "q.txt", q)
    np.save(d / "p.npy", p)
    np.save(d / "q.npy", q)
    (d / "bits_p.txt").write_text("\n".join(map(str, rng.integers(0, 2, 3000))) + "\n")
    (d / "bits_q.txt").write_text("\n".join(map(str, rng.integers(0, 2, 3000))) + "\n")
    (d / "p.txt.gz").write_bytes(gzip.compress((d / "p.txt").read_bytes()))
    np.savez(d / "p.npz", outputs=p)
    np.savez(d / "two.npz", a=p, b=q)
    (d / "p16.txt").write_bytes((d / "p.txt").read_text().encode("utf-16"))
    (d / "pbom.txt").write_bytes(b"\xef\xbb\xbf" + (d / "p.txt").read_bytes())
    (d / "junk.bin").write_bytes(bytes(range(256)) * 4)
    return d


def _run(args, cwd, **kw):
    return subprocess.run(
        [sys.executable, "-m", "renyi", *args], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, **kw
    )


def _bash(command, cwd):
    """Run a command line in bash (process substitution is bash's), with the timeout."""
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)


def _lower(stdout):
    return json.loads(stdout)[0]["lower"]


def _reference(d, p="p.txt", q="q.txt", *extra):
    proc = _run(["audit", p, q, "--orders", "2", "--json", *extra], d)
    assert proc.returncode == 0, proc.stderr
    return _lower(proc.stdout)


# ---------------------------------------------------------- every input read whole, once


@pytest.mark.slow
def test_process_substitution_reads_every_value(d):
    """`<(cat p.txt)` once lost a buffer's worth of values to a probe (4,314 of 5,000 read)."""
    proc = _bash(f"{sys.executable} -m renyi audit <(cat p.txt) q.txt --orders 2 --json", d)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)[0]
    assert out["n_p"] == 5000 and out["lower"] == _reference(d)


@pytest.mark.slow
def test_process_substitution_of_a_discrete_file(d):
    proc = _bash(f"{sys.executable} -m renyi audit <(cat bits_p.txt) bits_q.txt --orders 2 --json", d)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["n_p"] == 3000
    assert _lower(proc.stdout) == _reference(d, "bits_p.txt", "bits_q.txt")


@pytest.mark.slow
def test_a_named_pipe_is_read_not_hung(d, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    data = (d / "p.txt").read_bytes()

    def writer():
        with open(fifo, "wb") as fh:
            fh.write(data)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    proc = _run(["audit", str(fifo), "q.txt", "--orders", "2", "--json"], d)
    thread.join(timeout=10)
    assert proc.returncode == 0, proc.stderr
    assert _lower(proc.stdout) == _reference(d)


@pytest.mark.slow
def test_npy_bytes_on_standard_input(d):
    with open(d / "p.npy", "rb") as npy:
        proc = _run(["audit", "-", "q.npy", "--orders", "2", "--json"], d, stdin=npy)
    assert proc.returncode == 0, proc.stderr
    assert _lower(proc.stdout) == _reference(d, "p.npy", "q.npy")


@pytest.mark.slow
def test_npy_through_process_substitution_is_the_same_array(d):
    proc = _bash(f"{sys.executable} -m renyi audit <(cat p.npy) q.npy --orders 2 --json", d)
    assert proc.returncode == 0, proc.stderr
    assert _lower(proc.stdout) == _reference(d, "p.npy", "q.npy")


@pytest.mark.parametrize("name", ["p.txt.gz", "p.npz", "p16.txt", "pbom.txt"])
@pytest.mark.slow
def test_compressed_archived_and_encoded_inputs_give_the_same_bound(d, name):
    reference = _reference(d, "p.npy" if name == "p.npz" else "p.txt", "q.txt")
    assert _reference(d, name, "q.txt") == reference


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["audit", "two.npz", "q.txt", "--orders", "2"], ".npz archive of 2 arrays"),
        (["audit", "junk.bin", "q.txt", "--orders", "2"], "is neither text"),
        (["audit", "-", "-", "--orders", "2"], "cannot both be standard input"),
    ],
)
def test_unreadable_inputs_are_one_line(d, args, fragment):
    proc = _run(args, d, input="")
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and fragment in proc.stderr and "Traceback" not in proc.stderr


def test_python_number_syntax_and_other_digits_are_read(tmp_path):
    (tmp_path / "u.txt").write_text("1_000\n2_000\n3\n")
    (tmp_path / "ar.txt").write_text("١٢\n٣\n", encoding="utf-8")
    (tmp_path / "f.txt").write_text("1_000.5\n2.25\n")
    assert load_samples(str(tmp_path / "u.txt"), "P").tolist() == [1000, 2000, 3]
    assert load_samples(str(tmp_path / "ar.txt"), "P").tolist() == [12, 3]
    assert load_samples(str(tmp_path / "f.txt"), "P").tolist() == [1000.5, 2.25]


def test_a_bad_line_is_named(tmp_path):
    (tmp_path / "bad.txt").write_text("1.0\n2.0\n\nabc\n")
    with pytest.raises(UserError, match=r"value line 3: not a number: 'abc'"):
        load_samples(str(tmp_path / "bad.txt"), "P")


# ------------------------------------------------------------------ exit statuses


@pytest.mark.slow
def test_a_refuted_claim_exits_3_when_stdout_closes_early(d):
    for extra in ([], ["--json"]):
        proc = subprocess.run(
            [
                "bash",
                "-c",
                "set -o pipefail; "
                f"{sys.executable} -m renyi audit p.npy q.npy --orders 2 5 --claim-rho 0.0001 {' '.join(extra)} "
                "| head -c 1 > /dev/null",
            ],
            cwd=d,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert proc.returncode == 3, (extra, proc.stderr)


@pytest.mark.slow
def test_exit_statuses_are_documented_and_pinned(d, monkeypatch):
    helptext = _run(["--help"], d).stdout
    assert "exit status:" in helptext and "3 the claim is refuted" in helptext and "130 interrupted" in helptext
    assert _run(["audit", "p.npy", "q.npy", "--orders", "2"], d).returncode == 0
    assert _run(["audit", "p.npy", "q.npy", "--orders", "2", "--claim-rho", "0.0001"], d).returncode == 3
    assert _run(["audit", "p.npy", "q.npy", "--orders", "2", "--claim-rho", "10"], d).returncode == 0
    assert _run(["audit", "nope.npy", "q.npy", "--orders", "2"], d).returncode == 1
    assert _run(["audit", "p.npy", "--orders", "2"], d).returncode == 2

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr("renyi.cli.mechanisms.run", interrupted)
    assert main(["mechanisms"]) == 130


@pytest.mark.slow
def test_repeated_orders_are_refused(d, tmp_path):
    curve = tmp_path / "curve.txt"
    curve.write_text("2, 0.001\n5, 1.0\n2, 10.0\n")
    proc = _run(["audit", "p.npy", "q.npy", "--orders", "2", "5", "--claim-curve", str(curve)], d)
    assert proc.returncode == 1 and "order 2 is listed twice" in proc.stderr
    curve.write_text("2, 1.0\n")
    proc = _run(["audit", "p.npy", "q.npy", "--orders", "2", "2", "--claim-curve", str(curve)], d)
    assert proc.returncode == 1 and "order 2 is given twice" in proc.stderr


def test_orders_that_differ_print_differently(d, tmp_path):
    curve = tmp_path / "curve.txt"
    curve.write_text("2, 1.0\n")
    proc = _run(["audit", "p.npy", "q.npy", "--orders", "2.0000000000000004", "--claim-curve", str(curve)], d)
    assert proc.returncode == 1
    assert "no claimed epsilon for order 2.0000000000000004; the file lists orders 2" in proc.stderr


def test_alpha_above_one_half_warns_that_it_is_the_error_level(d):
    proc = _run(["audit", "p.npy", "q.npy", "--orders", "2", "--alpha", "0.95"], d)
    assert proc.returncode == 0 and "lower(5%)" in proc.stdout
    assert proc.stderr.startswith("renyi: warning: --alpha is the error level")


def test_a_negative_inline_prior_needs_the_attached_form(d):
    proc = _run(["design", "--leakage", "A.csv", "--prior", "-0.2,0.7,0.5", "--eps", "0.1", "--order", "2"], d)
    assert proc.returncode == 2 and "must be attached: --option=-0.2" in proc.stderr


def test_a_huge_claimed_epsilon_is_not_an_overflow(d):
    proc = _run(["audit", "p.npy", "q.npy", "--orders", "2", "--claim-epsilon", "1e300"], d)
    assert proc.returncode == 0 and "not refuted" in proc.stdout and proc.stderr == ""


def test_warnings_reach_the_table(d):
    proc = _run(["audit", "p.npy", "q.npy", "--orders", "2", "--floor", "10"], d)
    assert proc.returncode == 0
    assert "! order 2: warning: the estimate of D(" in proc.stdout and "below 0" in proc.stdout


# ---------------------------------------------------------------- design --out


@pytest.fixture()
def design_files(tmp_path):
    a = np.array([[0.85, 0.10, 0.15], [0.10, 0.80, 0.15], [0.05, 0.10, 0.70]])
    np.savetxt(tmp_path / "A.csv", a, delimiter=",")
    return tmp_path


DESIGN = ["design", "--leakage", "A.csv", "--prior", "0.2,0.3,0.5", "--eps", "0.02", "--order", "3"]


def test_design_never_overwrites_its_input(design_files):
    before = (design_files / "A.csv").read_bytes()
    proc = _run([*DESIGN, "--out", "A.csv"], design_files)
    assert proc.returncode == 1 and "is one of the inputs" in proc.stderr
    assert (design_files / "A.csv").read_bytes() == before


@pytest.mark.parametrize(
    "out,fragment",
    [(".", "is a directory"), ("missing/dir/channel.csv", "no such folder"), ("channel.xlsx", "unknown format")],
)
def test_design_checks_its_output_before_the_work(design_files, out, fragment):
    proc = _run([*DESIGN, "--out", out, "--time-limit", "1000"], design_files)
    assert proc.returncode == 1 and fragment in proc.stderr and proc.stdout == ""


@pytest.mark.slow
def test_design_writes_atomically_and_replaces(design_files):
    (design_files / "channel.csv").write_text("old\n")
    proc = _run([*DESIGN, "--out", "channel.csv"], design_files)
    assert proc.returncode == 0, proc.stderr
    written = np.loadtxt(design_files / "channel.csv", delimiter=",", ndmin=2)
    np.testing.assert_allclose(written.sum(axis=0), 1.0, rtol=1e-12)
    assert sorted(p.name for p in design_files.iterdir()) == ["A.csv", "channel.csv"]  # no temporary left


@pytest.mark.parametrize(
    "content,name,fragment",
    [
        ("0.85,0.1\n0.15,0.9\n", "A.npy", "not a .npy file"),
        ("0,85;0,10\n0,15;0,90\n", "A.csv", "decimal commas?"),
    ],
)
def test_design_names_what_is_wrong_with_a_leakage_file(design_files, content, name, fragment):
    (design_files / name).write_text(content)
    proc = _run(["design", "--leakage", name, "--prior", "0.5,0.5", "--eps", "0.1", "--order", "2"], design_files)
    assert proc.returncode == 1 and fragment in proc.stderr


@pytest.mark.parametrize(
    "extra,fragment",
    [
        (["--rtol", "0"], "--rtol must lie strictly between 0 and 1"),
        (["--time-limit", "0"], "--time-limit must be a number of seconds > 0"),
        (["--eps", "1e308"], "overflows double precision"),
        (["--order", "1e6"], "overflows double precision"),
    ],
)
def test_design_option_messages_name_the_option(design_files, extra, fragment):
    proc = _run([*DESIGN, *extra], design_files)
    assert proc.returncode == 1 and fragment in proc.stderr and "math range error" not in proc.stderr


def test_design_at_eps_zero_with_a_non_injective_matrix(tmp_path):
    np.savetxt(tmp_path / "A.csv", [[0.9, 0.5, 0.1], [0.1, 0.5, 0.9]], delimiter=",")
    proc = _run(
        ["design", "--leakage", "A.csv", "--prior", "0.3,0.3,0.4", "--prior-of", "y", "--eps", "0", "--order", "3"]
        + ["--json"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["utility"] > 0.1 and report["check_passed"] and report["budget_use"] is None


# ------------------------------------------------------------------- the sweep runner


def _runner(out, *args):
    return subprocess.run(
        [sys.executable, "-m", "renyi.sweeps", "--out", str(out), "--no-progress", "--workers", "1", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


@pytest.fixture()
def shipped(tmp_path):
    """A one-mechanism sweep written by the runner itself, as shipped data would be."""
    out = tmp_path / "data"
    proc = _runner(out, "--sweeps", "section4", "--max-n", "1000", "--replicates", "2")
    assert proc.returncode == 0, proc.stderr
    return out


QUICK = ["--sweeps", "section4", "--max-n", "1000", "--replicates", "3"]


@pytest.mark.slow
def test_no_manifest_means_no_overwrite(shipped):
    before = (shipped / "part1/section4.csv").read_bytes()
    (shipped / "MANIFEST.json").unlink()
    proc = _runner(shipped, *QUICK)
    assert proc.returncode == 1 and "has no entry for it" in proc.stderr and "--force" in proc.stderr
    assert (shipped / "part1/section4.csv").read_bytes() == before


@pytest.mark.slow
def test_a_missing_entry_means_no_overwrite(shipped):
    manifest = json.loads((shipped / "MANIFEST.json").read_text())
    del manifest["files"]["part1/section4.csv"]
    (shipped / "MANIFEST.json").write_text(json.dumps(manifest))
    proc = _runner(shipped, "--sweeps", "section4", "--max-n", "1000", "--replicates", "2")
    assert proc.returncode == 1 and "has no entry for it" in proc.stderr


@pytest.mark.slow
def test_an_edited_file_means_no_overwrite(shipped):
    path = shipped / "part1/section4.csv"
    path.write_text(path.read_text() + "\n")
    edited = path.read_bytes()
    proc = _runner(shipped, "--sweeps", "section4", "--max-n", "1000", "--replicates", "2")
    assert proc.returncode == 1 and "does not match its manifest entry" in proc.stderr
    assert path.read_bytes() == edited


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"description": "x"}'])
@pytest.mark.slow
def test_a_broken_manifest_is_one_line_naming_it(shipped, content):
    (shipped / "MANIFEST.json").write_text(content)
    proc = _runner(shipped, *QUICK, "--force")
    assert proc.returncode == 1 and "MANIFEST.json" in proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_force_replaces_and_records(shipped):
    proc = _runner(shipped, *QUICK, "--force")
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((shipped / "MANIFEST.json").read_text())
    assert manifest["files"]["part1/section4.csv"]["parameters"]["replicates"] == 3


def test_make_data_passes_force_on():
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    assert "-m renyi.sweeps --out data $(if $(FORCE),--force)" in makefile


def test_manifest_entries_of_concurrent_runs_all_land(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from renyi.sweeps.datafiles import update_manifest, write_rows

    (tmp_path / "part1").mkdir()
    names = [f"part1/f{i}.csv" for i in range(24)]

    def one(name):
        digest = write_rows(tmp_path / name, ["x"], [{"x": 1.0}])
        update_manifest(tmp_path, {name: {"sha256": digest}})

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, names))
    manifest = json.loads((tmp_path / "MANIFEST.json").read_text())
    assert sorted(manifest["files"]) == sorted(names)
    assert not list(tmp_path.glob(".*.tmp")) and not list((tmp_path / "part1").glob(".*.tmp"))


@pytest.mark.slow
def test_a_stale_entry_is_reported_not_kept_verbatim(shipped):
    from renyi.sweeps.datafiles import update_manifest

    manifest = json.loads((shipped / "MANIFEST.json").read_text())
    manifest["files"]["part1/gone.csv"] = {"sha256": "0" * 64}
    (shipped / "MANIFEST.json").write_text(json.dumps(manifest))
    problems = update_manifest(shipped, {})
    assert problems == [
        f"{shipped / 'MANIFEST.json'}: the entry for part1/gone.csv does not match its file (the file is missing)"
    ]
    again = json.loads((shipped / "MANIFEST.json").read_text())
    assert again["files"]["part1/gone.csv"]["mismatch"] == "the file is missing"


@pytest.mark.slow
def test_libraries_runner_refuses_negative_replicates():
    proc = subprocess.run(
        [sys.executable, "-m", "renyi.sweeps.libraries", "--out", "x", "--replicates", "-3"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 2 and "must be at least 1" in proc.stderr


def test_libraries_load_names_a_malformed_row(tmp_path):
    from renyi.sweeps import libraries

    shipped = libraries.load()
    (tmp_path / "part1").mkdir()
    fields = list(shipped[0])
    lines = [",".join(fields), ",".join(str(shipped[0][f]) for f in fields), "diffprivlib,x"]
    (tmp_path / "part1/libraries.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"libraries\.csv, line 3: malformed row"):
        libraries.load(tmp_path)
