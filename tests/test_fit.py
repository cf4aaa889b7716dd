"""PMNF model search of ``uml2perf fit``: recovery of known models, metrics, formats, bad input."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from uml2perf.cli import main
from uml2perf.fit import Factor, Measurements, Term, fit_hypothesis, fit_model, read_measurements


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _csv(rows, header="n,time") -> str:
    return (
        header
        + "\n"
        + "\n".join(",".join(f"{v!r}" if isinstance(v, float) else str(v) for v in r) for r in rows)
        + "\n"
    )


def _data(f, xs=(2, 4, 8, 16, 32, 64), reps=3, noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    pts, vals = [], []
    for x in xs:
        for _ in range(reps):
            pts.append([x])
            vals.append(f(x) * (1 + noise * rng.standard_normal()))
    return Measurements(["n"], np.array(pts, float), np.array(vals, float))


@pytest.mark.parametrize(
    ("f", "exponent", "log"),
    [
        (lambda n: 3.0 + 2.0 * n, Fraction(1), 0),
        (lambda n: 1.0 + 0.5 * n * math.log2(n), Fraction(1), 1),
        (lambda n: 0.1 + 4.0 * n**1.5, Fraction(3, 2), 0),
        (lambda n: 2.0 + 0.3 * n ** (2 / 3), Fraction(2, 3), 0),
        (lambda n: 0.5 + 100.0 / n, Fraction(-1), 0),
        (lambda n: 1.0 + 0.2 * math.log2(n) ** 2, Fraction(0), 2),
    ],
)
def test_exact_models_are_recovered(f, exponent, log):
    model = fit_model(_data(f))
    assert len(model.fit.terms) == 1
    factor = model.fit.terms[0].factors[0]
    assert (factor.exponent, factor.log_exponent) == (exponent, log)
    assert model.fit.smape < 1e-6
    assert model.fit.r2_adj == pytest.approx(1.0)


def test_noisy_n_log_n_keeps_its_coefficient():
    model = fit_model(
        _data(
            lambda n: 2e-6 + 3.9e-8 * n * math.log2(n), xs=(1000, 2000, 4000, 8000, 16000, 32000), noise=0.01
        )
    )
    factor = model.fit.terms[0].factors[0]
    assert (factor.exponent, factor.log_exponent) == (1, 1)
    assert model.fit.coefficients[1] == pytest.approx(3.9e-8, rel=0.03)
    low, high = model.interval(np.array([[32000.0]]))
    measured = 2e-6 + 3.9e-8 * 32000 * math.log2(32000)
    assert low[0] < measured < high[0]


def test_constant_data_gives_a_constant():
    model = fit_model(_data(lambda n: 5.0, noise=0.001))
    assert model.fit.terms == ()
    assert model.fit.coefficients[0] == pytest.approx(5.0, rel=1e-3)


def test_hand_computed_metrics_of_a_line():
    # y = 1 + 2x on x = 1..4 with residuals +0.1, -0.1, -0.1, +0.1, fitted on relative errors:
    # minimise sum(((y - c0 - c1*x) / y)**2), the normal equations with weights W = 1/y**2
    xs, ys = (1.0, 2.0, 3.0, 4.0), (3.1, 4.9, 6.9, 9.1)
    data = Measurements(["x"], np.array([[x] for x in xs]), np.array(ys))
    fit = fit_hypothesis((Term((Factor(0, Fraction(1), 0),)),), data, np.arange(4))
    c0, c1 = fit.coefficients
    W = [1 / y**2 for y in ys]
    S = sum(W)
    Sx = sum(w * x for w, x in zip(W, xs, strict=True))
    Sy = sum(w * y for w, y in zip(W, ys, strict=True))
    Sxx = sum(w * x * x for w, x in zip(W, xs, strict=True))
    Sxy = sum(w * x * y for w, x, y in zip(W, xs, ys, strict=True))
    slope = (S * Sxy - Sx * Sy) / (S * Sxx - Sx**2)
    intercept = (Sy - slope * Sx) / S
    assert (c0, c1) == (pytest.approx(intercept), pytest.approx(slope))
    assert slope == pytest.approx(2.0, abs=0.1) and intercept == pytest.approx(1.0, abs=0.2)
    rss = sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    assert fit.rss == pytest.approx(rss)
    tss = sum((y - 6.0) ** 2 for y in ys)
    r2 = 1 - rss / tss
    assert fit.r2_adj == pytest.approx(1 - (1 - r2) * 3 / 2)
    assert fit.sigma == pytest.approx(math.sqrt(rss / 2))
    assert fit.cv_smape > fit.smape > 0


def test_relative_least_squares_holds_the_small_end():
    # a cost that is n*log2(n) plus a fixed part, timed with noise in proportion to the time:
    # the fit must hold the smallest size as well as the largest (plain least squares did not)
    rng = np.random.default_rng(5)
    sizes = [1024 * 4**k for k in range(6)]
    points, values = [], []
    for n in sizes:
        for _ in range(5):
            points.append([n])
            values.append((2e-5 + 2.5e-9 * n * math.log2(n)) * (1 + 0.03 * rng.standard_normal()))
    model = fit_model(Measurements(["n"], np.array(points, float), np.array(values)))
    for n in (sizes[0], sizes[-1]):
        truth = 2e-5 + 2.5e-9 * n * math.log2(n)
        assert float(model.predict(np.array([[n]]))[0]) == pytest.approx(truth, rel=0.06)


def test_two_parameters_multiplicative_and_additive():
    rng = np.random.default_rng(3)
    pts, vals, pts2, vals2 = [], [], [], []
    for n in (1000, 2000, 4000, 8000, 16000):
        for p in (1, 2, 4, 8, 16):
            for _ in range(2):
                pts.append([n, p])
                vals.append((1e-4 + 2e-6 * n / p) * (1 + 0.002 * rng.standard_normal()))
                pts2.append([n, p])
                vals2.append((5e-6 + 1e-6 * math.log2(p) * n**0.5) * (1 + 0.002 * rng.standard_normal()))
    work = fit_model(Measurements(["n", "p"], np.array(pts, float), np.array(vals)))
    texts = [t.text(["n", "p"]) for t in work.fit.terms]
    assert "n * p**(-1)" in texts
    comm = fit_model(Measurements(["n", "p"], np.array(pts2, float), np.array(vals2)))
    assert [t.text(["n", "p"]) for t in comm.fit.terms] == ["sqrt(n) * log2(p)"]
    assert comm.fit.coefficients[1] == pytest.approx(1e-6, rel=0.01)


def test_expression_output_is_in_the_expression_language(tmp_path):
    from uml2perf.expressions import parse_expression as parse

    model = fit_model(_data(lambda n: 0.5 + 100.0 / n + 0.01 * n**0.75))
    expression = model.expression()
    parsed = parse(expression)
    assert parsed is not None
    env = {"n": 10.0, "log2": math.log2, "sqrt": math.sqrt}
    assert eval(expression, {"__builtins__": {}}, env) == pytest.approx(
        float(model.predict(np.array([[10.0]]))[0]), rel=1e-4
    )


def test_cli_json_sidecar_and_run(tmp_path, capsys):
    rows = [("sort", n, 1e-3 + 2e-7 * n) for n in (1000, 2000, 4000, 8000, 16000) for _ in range(2)]
    csv_path = _write(tmp_path, "m.csv", "element,n,time\n" + "".join(f"{e},{n},{t!r}\n" for e, n, t in rows))
    sidecar = tmp_path / "costs.toml"
    assert main(["fit", str(csv_path), "--json", "--sidecar", str(sidecar)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"expression", "parameters", "terms", "metrics"}
    assert out["parameters"] == ["n"]
    assert out["metrics"]["smape"] < 1e-6
    import tomllib

    costs = tomllib.loads(sidecar.read_text())
    assert costs["elements"]["sort"]["cost"] == out["expression"]  # exact data: no interval


def test_fit_sidecar_writes_the_prediction_interval_and_run_uses_it(tmp_path, capsys):
    import random
    import tomllib

    rng = random.Random(3)
    rows = [
        (n, (1e-3 + 2e-7 * n) * rng.uniform(0.9, 1.1))
        for n in (1000, 2000, 4000, 8000, 16000)
        for _ in range(6)
    ]
    csv_path = _write(tmp_path, "m.csv", "element,n,time\n" + "".join(f"sort,{n},{t!r}\n" for n, t in rows))
    sidecar = tmp_path / "costs.toml"
    assert main(["fit", str(csv_path), "--sidecar", str(sidecar)]) == 0
    cost = tomllib.loads(sidecar.read_text())["elements"]["sort"]["cost"]
    assert set(cost) == {"value", "low", "high"}
    low, high = (float(cost[k].split(" * ")[0]) for k in ("low", "high"))
    # measurements within +-10%: a 90% interval of a new one of roughly that width
    assert 0.8 < low < 0.97 and 1.03 < high < 1.2
    assert "prediction interval" in sidecar.read_text()


def test_extrap_text_format(tmp_path):
    text = """# comment
PARAMETER p
POINTS 2 4 8 16 32
REGION main
METRIC time
DATA 2.1 2.0 1.9
DATA 4.0 4.1 3.9
DATA 8.0 8.1 7.9
DATA 16.1 15.9 16.0
DATA 32.0 32.2 31.8
"""
    [data] = read_measurements(_write(tmp_path, "in.txt", text))
    assert data.element == "main" and data.values.shape == (15,)
    model = fit_model(data)
    assert model.fit.terms[0].factors[0].exponent == 1
    assert model.fit.coefficients[1] == pytest.approx(1.0, rel=0.02)


def test_extrap_text_two_parameters(tmp_path):
    points = [(p, n) for p in (2, 4, 8, 16) for n in (10, 20, 40, 80)]
    text = "PARAMETER p\nPARAMETER n\nPOINTS " + " ".join(f"( {p} {n} )" for p, n in points) + "\nREGION r\n"
    text += "".join(f"DATA {3 + p * n} {3 + p * n}\n" for p, n in points)
    [data] = read_measurements(_write(tmp_path, "two.txt", text))
    model = fit_model(data)
    assert [t.text(["p", "n"]) for t in model.fit.terms] == ["p * n"]


def test_extrap_json_format(tmp_path):
    doc = {
        "parameters": ["x"],
        "measurements": [
            {"point": [x], "values": [1 + x * x, 1 + x * x], "callpath": "k", "metric": "time"}
            for x in (1, 2, 3, 4, 5)
        ],
    }
    [data] = read_measurements(_write(tmp_path, "in.json", json.dumps(doc)))
    model = fit_model(data, negative=False)
    assert model.fit.terms[0].factors[0].exponent == 2


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("missing.csv", "n,time\n1,2\n2,\n", ":3: column 2: missing value of 'time'"),
        ("nonnum.csv", "n,time\n1,2\nx,3\n", ":3: column 1 (n): 'x' is not a number"),
        ("short.csv", "n,time\n1,2\n3\n", ":3: 1 values for 2 columns"),
        ("nometric.csv", "n,t\n1,2\n", "no column 'time'"),
        ("flat.csv", "n,p,time\n1,2,3\n2,2,4\n3,2,5\n", "parameter 'p' never varies"),
        ("few.csv", "n,time\n1,2\n2,3\n2,3.1\n", "only 2 distinct measurement points"),
        ("bad.txt", "PARAMETER p\nPOINTS 1 2 3\nDATA 1\nDATA 2\nDATA 3\nDATA 4\n", ":6: more DATA lines"),
        ("bad2.txt", "PARAMETER p\nPOINTS 1 2 3\nFOO 3\n", ":3: unknown Extra-P keyword 'FOO'"),
        ("bad.json", '{"parameters": ["x"],\n "measurements": [}', "bad.json:2: not valid JSON"),
        ("empty.csv", "", "no measurements in the file"),
    ],
)
def test_bad_input_names_file_line_and_column(tmp_path, capsys, name, text, needle):
    path = _write(tmp_path, name, text)
    sidecar = tmp_path / "out.toml"
    assert main(["fit", str(path), "--sidecar", str(sidecar), "--name", "x"]) == 1
    err = capsys.readouterr().err
    assert needle in err and name in err
    assert "Traceback" not in err
    assert not sidecar.exists()


def test_poor_fit_warns(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = "".join(f"{n},{rng.uniform(1, 10)!r}\n" for n in (1, 2, 3, 4, 5, 6, 7, 8) for _ in range(3))
    assert main(["fit", str(_write(tmp_path, "noise.csv", "n,time\n" + rows))]) == 0
    assert "warning: poor fit" in capsys.readouterr().err


def test_sidecar_needs_a_name(tmp_path, capsys):
    path = _write(tmp_path, "m.csv", "n,time\n1,1\n2,2\n3,3\n4,4\n")
    assert main(["fit", str(path), "--sidecar", str(tmp_path / "s.toml")]) == 2
    assert "--name" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("extrap") is None, reason="Extra-P is not installed")
@pytest.mark.parametrize(
    ("f", "term"),
    [
        (lambda p: 0.5 + 0.01 * p * math.log2(p), "p^(1) * log2(p)^(1)"),
        (lambda p: 2 + 0.3 * p**0.5, "p^(1/2)"),
        (lambda p: 3 + 0.2 * p**0.75, "p^(3/4)"),
        (lambda p: 1 + 0.05 * math.log2(p) ** 2, "log2(p)^(2)"),
    ],
)
def test_agrees_with_extrap(tmp_path, f, term):
    """The same data through Extra-P's command line: the same term and coefficients."""
    rng = np.random.default_rng(5)
    xs = (4, 8, 16, 32, 64, 128)
    text = "PARAMETER p\nPOINTS " + " ".join(map(str, xs)) + "\nREGION r\nMETRIC time\n"
    text += "".join(
        "DATA " + " ".join(f"{f(x) * (1 + 0.01 * rng.standard_normal()):.6g}" for _ in range(5)) + "\n"
        for x in xs
    )
    path = _write(tmp_path, "in.txt", text)
    ours = fit_model(read_measurements(path)[0])
    out = subprocess.run(["extrap", "--text", str(path)], capture_output=True, text=True, timeout=300).stdout
    line = next(x for x in out.splitlines() if "Model:" in x)
    constant, rest = line.split("Model:")[1].split(" + ", 1)
    coefficient, their_term = rest.split(" * ", 1)
    assert their_term.strip() == term
    assert ours.fit.coefficients[0] == pytest.approx(float(constant), rel=1e-3)
    assert ours.fit.coefficients[1] == pytest.approx(float(coefficient), rel=1e-3)


def test_plot_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    path = _write(tmp_path, "m.csv", "n,time\n" + "".join(f"{n},{2 * n + 1}\n" for n in (1, 2, 3, 4, 5)))
    plot = tmp_path / "fit.png"
    assert main(["fit", str(path), "--plot", str(plot)]) == 0
    assert plot.stat().st_size > 1000
