"""The command line: tables, JSON, and one-line errors without tracebacks."""

import json
import subprocess
import sys

import numpy as np
import pytest
from renyi.cli import main


@pytest.fixture()
def files(tmp_path):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "p.npy", rng.normal(1, 5, 20_000))
    np.savetxt(tmp_path / "q.csv", rng.normal(0, 5, 20_000))
    np.save(tmp_path / "rr_p.npy", rng.integers(0, 2, (3000, 3)).astype(np.uint8))
    np.savetxt(tmp_path / "rr_q.csv", rng.integers(0, 2, (3000, 3)), fmt="%d", delimiter=",")
    np.save(tmp_path / "pickled.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    (tmp_path / "empty.txt").write_text("# nothing here\n")
    (tmp_path / "nan.txt").write_text("1.0\nnan\n2.0\n")
    (tmp_path / "ragged.txt").write_text("1,2\n3\n")
    (tmp_path / "word.txt").write_text("1.0\nabc\n")
    return tmp_path


def test_table_and_json_agree_with_the_library(files, capsys):
    from renyi.audit import rdp_lower_bound

    assert main(["audit", str(files / "p.npy"), str(files / "q.csv"), "--orders", "2", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    lib = rdp_lower_bound(np.load(files / "p.npy"), np.loadtxt(files / "q.csv"), [2, 5])
    assert [r["lower"] for r in out] == pytest.approx([b.lower for b in lib], rel=1e-12)
    assert main(["audit", str(files / "p.npy"), str(files / "q.csv"), "--orders", "2"]) == 0
    text = capsys.readouterr().out
    assert "lower(95%)" in text and f"{lib[0].lower:.6g}" in text


def test_discrete_rows_from_csv(files, capsys):
    assert main(["audit", str(files / "rr_p.npy"), str(files / "rr_q.csv"), "--orders", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out[0]["discrete"] and out[0]["cells"] == 8 and out[0]["grid"] == "outcomes"
    for record in [out[0], *out[0]["directions"]]:
        assert record["trivial"] == (record["lower"] <= 0)
        expected = max(record["bias"], 0.0) if record["bias_corrected"] else 0.0
        assert record["bias_subtracted"] == expected


def test_options_are_passed_through(files, capsys):
    assert (
        main(
            [
                "audit",
                str(files / "p.npy"),
                str(files / "q.csv"),
                "--orders",
                "2",
                "--bandwidth",
                "0.5",
                "--floor",
                "1e-3",
                "--beta",
                "500",
                "--alpha",
                "0.1",
                "--no-bias-correction",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)[0]
    got = (out["bandwidth"], out["floor"], out["beta"], out["alpha"], out["bias_corrected"])
    assert got == (0.5, 1e-3, 500, 0.1, False)


def test_mechanisms_listing(capsys):
    assert main(["mechanisms", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert round(out["gaussian"]["targets"]["2"], 10) == 0.04
    assert len(out) == 7
    assert main(["mechanisms"]) == 0
    assert "shuffled_randomized_response" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["audit", "missing.npy", "q.csv", "--orders", "2"], "no such file"),
        (["audit", "pickled.npy", "q.csv", "--orders", "2"], "pickled"),
        (["audit", "empty.txt", "q.csv", "--orders", "2"], "empty"),
        (["audit", "nan.txt", "q.csv", "--orders", "2"], "NaN"),
        (["audit", "ragged.txt", "q.csv", "--orders", "2"], "line 2"),
        (["audit", "word.txt", "q.csv", "--orders", "2"], "not a number"),
        (["audit", "p.npy", "q.csv", "--orders", "1"], "must be > 1"),
        (["audit", "p.npy", "q.csv", "--orders", "2", "--alpha", "2"], "alpha"),
        (["audit", "p.npy", "q.csv", "--orders", "two"], "not a number"),
    ],
)
def test_user_errors_are_one_line_without_traceback(files, args, fragment):
    proc = subprocess.run([sys.executable, "-m", "renyi", *args], cwd=files, capture_output=True, text=True)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("renyi: error:") and fragment in lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.slow
def test_stdin_and_help(files):
    data = "\n".join(str(v) for v in np.random.default_rng(1).normal(1, 5, 5000))
    proc = subprocess.run(
        [sys.executable, "-m", "renyi", "audit", "-", "q.csv", "--orders", "2"],
        cwd=files,
        input=data,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and "lower(95%)" in proc.stdout
    helptext = subprocess.run([sys.executable, "-m", "renyi", "audit", "--help"], capture_output=True, text=True).stdout
    assert "examples:" in helptext and "python -m renyi audit" in helptext
