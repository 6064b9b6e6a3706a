"""`python -m renyi design`: file formats, agreement with the API, and one-line errors."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from oracles import lifts_of_channel
from renyi.cli import main
from renyi.lift import GeneralLeakageModel, LeakageModel, certificate, directional_mechanism, global_optimum

A = np.array([[0.85, 0.10, 0.15], [0.10, 0.80, 0.15], [0.05, 0.10, 0.70]])
P_X = np.array([0.2, 0.3, 0.5])


@pytest.fixture()
def files(tmp_path):
    np.savetxt(tmp_path / "A.csv", A, delimiter=",", fmt="%.2f")
    np.save(tmp_path / "A.npy", A)
    (tmp_path / "A.json").write_text(json.dumps({"p_x_given_y": A.tolist()}))
    np.savetxt(tmp_path / "A_t.csv", A.T, delimiter=",", fmt="%.2f")
    np.savetxt(tmp_path / "px.csv", P_X)
    np.save(tmp_path / "px.npy", P_X)
    return tmp_path


def run_json(args, capsys):
    assert main(["design", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_reproduces_the_medical_example_and_writes_a_feasible_channel(files, capsys):
    out = files / "channel.csv"
    status = main(
        [
            "design",
            "--leakage",
            str(files / "A.csv"),
            "--prior",
            str(files / "px.csv"),
            "--eps",
            "0.02",
            "--order",
            "3",
            "--out",
            str(out),
        ]
    )
    text = capsys.readouterr().out
    assert status == 0
    assert "epsilon_max = 0.0240842" in text and "delta0 = 0.2845" in text and ": ok" in text
    assert "certified gap < 1e-06" in text
    channel = np.loadtxt(out, delimiter=",", ndmin=2)
    assert out.read_text().startswith("# P_(U|Y): row u = output, column y")
    np.testing.assert_allclose(channel.sum(axis=0), 1, atol=1e-15)
    p_y = np.linalg.solve(A, P_X)
    lifts = lifts_of_channel(channel, p_y, A, P_X, 3)  # independent recomputation
    assert lifts.max() <= math.exp(0.02) * (1 + 1e-12)


@pytest.mark.parametrize("leakage", ["A.csv", "A.npy", "A.json"])
@pytest.mark.parametrize("prior", ["px.csv", "px.npy", "0.2,0.3,0.5"])
def test_every_input_format_gives_the_same_design(files, capsys, leakage, prior):
    prior = prior if "," in prior else str(files / prior)
    out = run_json(
        [
            "--leakage",
            str(files / leakage),
            "--prior",
            prior,
            "--eps",
            "0.01",
            "--order",
            "2",
            "--method",
            "directional",
        ],
        capsys,
    )
    model = LeakageModel(P_X, A)
    assert out["utility"] == pytest.approx(directional_mechanism(model, 0.01, 2).utility, rel=1e-12)
    assert out["theorem1"]["delta0"] == pytest.approx(certificate(model, 0.01, 2).delta0, rel=1e-12)


@pytest.mark.parametrize("suffix", [".csv", ".npy", ".txt"])
def test_channel_round_trip_and_api_agreement(files, capsys, suffix):
    out = files / f"channel{suffix}"
    report = run_json(
        [
            "--leakage",
            str(files / "A.npy"),
            "--prior",
            "0.2,0.3,0.5",
            "--eps",
            "0.02",
            "--order",
            "3",
            "--out",
            str(out),
        ],
        capsys,
    )
    written = np.load(out) if suffix == ".npy" else np.loadtxt(out, delimiter=",", ndmin=2)
    np.testing.assert_array_equal(written, np.array(report["p_u_given_y"]))
    api = global_optimum(LeakageModel(P_X, A), 0.02, 3)
    assert report["utility"] == pytest.approx(api.utility, rel=1e-12)
    assert report["bracket"]["upper"] == pytest.approx(api.upper_bound, rel=1e-12)
    assert report["theorem1"]["epsilon_max"] == pytest.approx(0.0240842, abs=1e-7)
    assert report["check_passed"]


@pytest.mark.slow
def test_prior_of_y_and_non_square_leakage(files, capsys):
    p_y = np.linalg.solve(A, P_X)
    same = run_json(
        [
            "--leakage",
            str(files / "A.csv"),
            "--prior",
            ",".join(f"{v:.17g}" for v in p_y),
            "--prior-of",
            "y",
            "--eps",
            "0.02",
            "--order",
            "3",
        ],
        capsys,
    )
    assert same["theorem1"]["delta0"] == pytest.approx(0.284493, abs=1e-6)
    a34 = np.array([[0.7, 0.2, 0.1, 0.3], [0.2, 0.6, 0.2, 0.3], [0.1, 0.2, 0.7, 0.4]])
    np.savetxt(files / "A34.csv", a34, delimiter=",")
    wide = run_json(
        [
            "--leakage",
            str(files / "A34.csv"),
            "--prior",
            "0.2,0.3,0.3,0.2",
            "--prior-of",
            "y",
            "--eps",
            "0.05",
            "--order",
            "2",
        ],
        capsys,
    )
    assert wide["theorem1"] is None and wide["outputs"] <= 4
    api = global_optimum(GeneralLeakageModel([0.2, 0.3, 0.3, 0.2], a34), 0.05, 2)
    assert wide["utility"] == pytest.approx(api.utility, rel=1e-12)


def test_transposed_file_is_recognised(files, capsys):
    assert (
        main(["design", "--leakage", str(files / "A_t.csv"), "--prior", "0.2,0.3,0.5", "--eps", "0.02", "--order", "3"])
        == 1
    )
    assert "looks transposed: pass --transpose" in capsys.readouterr().err
    out = run_json(
        ["--leakage", str(files / "A_t.csv"), "--transpose", "--prior", "0.2,0.3,0.5", "--eps", "0.02", "--order", "3"],
        capsys,
    )
    assert out["check_passed"]


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--prior", "0.2,0.3,0.6"], "sum to 1.1, not 1"),
        (["--prior", "0.5,0.5,0"], "must be > 0"),
        (["--prior", "0.5,0.5"], "has 2 entries"),
        (["--eps", "0"], "--eps 0 with an invertible leakage matrix allows only the trivial mechanism"),
        (["--eps", "-0.1"], "--eps must be a finite budget >= 0"),
        (["--eps", "0.05", "--method", "directional"], "above epsilon_max = 0.0240842"),
        (["--order", "1"], "--order (the order alpha) must be finite and > 1"),
        (["--order", "0.5"], "--order (the order alpha) must be finite and > 1"),
        (["--out", "channel.xlsx"], "unknown format"),
        (["--leakage", "missing.csv"], "no such file"),
    ],
)
def test_user_errors_are_one_line(files, capsys, extra, message):
    args = {"--leakage": str(files / "A.csv"), "--prior": "0.2,0.3,0.5", "--eps": "0.02", "--order": "3"}
    for key, value in zip(extra[::2], extra[1::2]):
        args[key] = value if key != "--out" else str(files / value)
    argv = ["design"] + [item for pair in args.items() for item in pair]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("renyi: error:") and message in err and err.count("\n") == 1


def test_bad_matrices(tmp_path, capsys):
    cases = {
        "neg.csv": "0.9,-0.1\n0.1,1.1\n",
        "ragged.csv": "0.5,0.5\n0.5\n",
        "vector.csv": "0.5\n0.5\n",
        "word.csv": "0.5,abc\n0.5,0.5\n",
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        assert (
            main(["design", "--leakage", str(tmp_path / name), "--prior", "0.5,0.5", "--eps", "0.01", "--order", "2"])
            == 1
        )
        err = capsys.readouterr().err
        assert err.startswith("renyi: error: --leakage") and err.count("\n") == 1, (name, err)


def test_many_outputs_get_a_note_and_a_proved_bracket_within_the_time_limit(tmp_path, capsys):
    """|Y| = 31: no refusal, a note on stderr (stdout stays the JSON), a feasible channel and
    a bracket, within the 2-s limit plus the one-step overrun global_optimum documents."""
    import time

    k = 31
    a = 0.5 * np.eye(k) + 0.5 / k
    np.save(tmp_path / "big.npy", a)
    np.save(tmp_path / "uniform.npy", np.full(k, 1 / k))
    args = ["design", "--leakage", str(tmp_path / "big.npy"), "--prior", str(tmp_path / "uniform.npy")]
    started = time.perf_counter()
    status = main(args + ["--eps", "1e-4", "--order", "2", "--time-limit", "2", "--json"])
    assert time.perf_counter() - started < 6
    out, err = capsys.readouterr()
    assert status == 0 and err.startswith("renyi: note: |Y| = 31") and err.count("\n") == 1
    report = json.loads(out)
    assert report["check_passed"] and 0 < report["bracket"]["lower"] <= report["bracket"]["upper"]


@pytest.mark.slow
def test_no_traceback_from_the_shell(files):
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "renyi",
            "design",
            "--leakage",
            str(files / "A.csv"),
            "--prior",
            "0.2,0.3,0.6",
            "--eps",
            "0.02",
            "--order",
            "3",
        ],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 1 and "Traceback" not in res.stderr and res.stderr.count("\n") == 1


@pytest.mark.parametrize("workers", ["0", "-3"])
def test_workers_must_be_a_process_count(files, capsys, workers):
    argv = ["design", "--leakage", str(files / "A.csv"), "--prior", str(files / "px.csv"), "--eps", "0.02"]
    assert main(argv + ["--order", "2", "--workers", workers]) == 1
    err = capsys.readouterr().err
    assert err.startswith("renyi: error: --workers must be") and err.count("\n") == 1, err


def test_above_epsilon_max_the_optimum_is_designed_and_the_closed_forms_need_the_flag(files, capsys):
    """The medical example's epsilon_max at order 3 is 0.0241 (Theorem 1); at eps = 2 the
    optimum's bracket is proved without Theorem 1, while the two-scale mechanism is refused
    unless asked for, by the new name or the former one.  Its JSON is valid although V_+ is
    infinite there (Theorem 1's band is vacuous): null, and named under "non_finite"."""
    common = ["design", "--leakage", str(files / "A.csv"), "--prior", str(files / "px.csv"), "--order", "3"]
    report = run_json(common[1:] + ["--eps", "2"], capsys)
    assert report["theorem1"]["admissible"] is False and report["check_passed"] is True
    assert report["theorem1"]["V_plus"] is None and report["non_finite"] == {"theorem1.V_plus": "inf"}
    assert report["bracket"]["lower"] <= report["bracket"]["upper"]
    assert main(common + ["--eps", "2", "--method", "two-scale"]) == 1
    err = capsys.readouterr().err
    assert "outside Theorem 1's range" in err and "--above-epsilon-max" in err and len(err.splitlines()) == 1
    for flag in ("--above-epsilon-max", "--beyond-certificate"):
        assert main(common + ["--eps", "2", "--method", "two-scale", flag]) == 0
        assert "mechanism (two-scale)" in capsys.readouterr().out


def test_a_prior_entry_too_small_for_the_linear_programs_is_one_line(tmp_path, capsys):
    """P_Y(y) = 1e-300 on a singular 2 x 3 matrix ended in a RuntimeError traceback from HiGHS
    (status 15); below 1e-13 every such LP failed, at 1e-12 they still solve."""
    np.savetxt(tmp_path / "W.csv", [[0.5, 0.5, 0.2], [0.5, 0.5, 0.8]], delimiter=",")
    args = ["design", "--leakage", str(tmp_path / "W.csv"), "--prior-of", "y", "--eps", "0.1", "--order", "3"]
    assert main(args + ["--prior", "0.5,0.5,1e-300"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("renyi: error: P_Y(y=2) = 1e-300 is below 1e-12") and err.count("\n") == 1
    assert main(args + ["--prior", "0.5,0.499999999999,1e-12", "--time-limit", "5"]) == 0
