"""``uml2perf sweep`` through the command line: grid parsing, analytic and simulated points, output."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import synthetic

from uml2perf.cli import main
from uml2perf.sweep import parse_grid

REPO = Path(__file__).resolve().parent.parent
GESCHER = "gescher"  # a bundled machine, found by name


@pytest.fixture(scope="module")
def bsp(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("sweep") / "bsp.uml"
    return str(synthetic.write_model(path, synthetic.bsp_model(steps=2)))


@pytest.fixture(scope="module")
def ring(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("sweep") / "ring.uml"
    return str(synthetic.write_model(path, synthetic.ring_model(rounds=4)))


def sweep_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["sweep", *args, "--json", "-"]) == 0
    return json.loads(capsys.readouterr().out)


def simulated_time(capsys: pytest.CaptureFixture[str], model: str, procs: int, *sets: str) -> float:
    extra = [x for s in sets for x in ("--set", s)]
    assert main(["run", model, "--machine", GESCHER, "--procs", str(procs), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)["time"]


def test_bsp_grid_is_analytic_in_grid_order(bsp: str, capsys: pytest.CaptureFixture[str]) -> None:
    data = sweep_json(capsys, bsp, "--machine", GESCHER, "--grid", "procs=1,2,8", "--grid", "NAT=32,64")
    assert data["parameters"] == ["procs", "NAT"]
    assert [(r["procs"], r["NAT"]) for r in data["rows"]] == [
        (1, 32),
        (1, 64),
        (2, 32),
        (2, 64),
        (8, 32),
        (8, 64),
    ]
    assert {r["method"] for r in data["rows"]} == {"analytic"}
    row = data["rows"][5]
    assert row["time"] == pytest.approx(simulated_time(capsys, bsp, 8, "NAT=64"), rel=1e-9)


def test_no_analytic_simulates_every_point_with_the_same_answers(
    bsp: str, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = ["--machine", GESCHER, "--grid", "procs=2,4", "--grid", "STEPS=1,3", "--set", "NAT=48"]
    fast = sweep_json(capsys, bsp, *grid)
    slow = sweep_json(capsys, bsp, *grid, "--no-analytic", "--workers", "2")
    assert {r["method"] for r in slow["rows"]} == {"simulation"}
    for a, b in zip(fast["rows"], slow["rows"], strict=True):
        assert (a["procs"], a["STEPS"]) == (b["procs"], b["STEPS"])
        for column in ("time", "compute", "comm", "wait"):
            assert a[column] == pytest.approx(b[column], rel=1e-9, abs=1e-12)


def test_point_to_point_model_is_simulated_in_parallel(ring: str, capsys: pytest.CaptureFixture[str]) -> None:
    data = sweep_json(
        capsys,
        ring,
        "--machine",
        GESCHER,
        "--grid",
        "procs=2,3,4",
        "--grid",
        "SIZE=8,60000",
        "--workers",
        "2",
    )
    assert [(r["procs"], r["SIZE"]) for r in data["rows"]] == [
        (2, 8),
        (2, 60000),
        (3, 8),
        (3, 60000),
        (4, 8),
        (4, 60000),
    ]
    assert {r["method"] for r in data["rows"]} == {"simulation"}
    assert any("send" in note for note in data["notes"])
    assert data["rows"][4]["time"] == pytest.approx(simulated_time(capsys, ring, 4, "SIZE=8"), rel=1e-12)


def test_table_and_csv_output(bsp: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rows.csv"
    assert (
        main(["sweep", bsp, "--grid", "nodes=1,2", "--procs", "4", "--machine", GESCHER, "--csv", str(out)])
        == 0
    )
    table = capsys.readouterr().out.splitlines()
    header = table[0].split("  ")
    assert [h.strip() for h in header if h.strip()][0] == "nodes"
    names = [h.strip().split(" [")[0] for h in header if h.strip()]
    assert names == ["nodes", "time", "compute", "comm", "wait", "method"]
    assert all(f"{name} [" in table[0] for name in ("time", "compute", "comm", "wait"))  # a unit each
    assert len(table) == 3 and all(line.rstrip().endswith("analytic") for line in table[1:])
    rows = list(csv.DictReader(out.open()))
    assert [r["nodes"] for r in rows] == ["1", "2"]
    assert float(rows[0]["time_s"]) > 0 and list(rows[0]) == [
        "nodes",
        "time_s",
        "compute_s",
        "comm_s",
        "wait_s",
        "method",
    ]


def test_oversubscribed_points_fall_back_to_simulation(bsp: str, capsys: pytest.CaptureFixture[str]) -> None:
    data = sweep_json(
        capsys, bsp, "--machine", GESCHER, "--grid", "procs=4,6", "--nodes", "1", "--workers", "1"
    )
    assert [r["method"] for r in data["rows"]] == ["analytic", "simulation"]


@pytest.mark.parametrize(
    "grid",
    ["procs", "procs=", "procs=1,,2", "=3", "procs=0", "procs=two", "9x=1"],
)
def test_bad_grid_syntax_is_a_usage_error(bsp: str, grid: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", bsp, "--grid", grid]) == 2
    assert "--grid" in capsys.readouterr().err


def test_repeated_or_fixed_grid_names_are_usage_errors(bsp: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", bsp, "--grid", "NAT=1", "--grid", "NAT=2"]) == 2
    assert main(["sweep", bsp, "--grid", "NAT=1", "--set", "NAT=2"]) == 2
    assert main(["sweep", bsp, "--grid", "NAT=1", "--workers", "0"]) == 2


def test_unknown_parameter_lists_the_model_parameters(bsp: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", bsp, "--grid", "ATOMS=1,2"]) == 1
    err = capsys.readouterr().err
    assert "'ATOMS'" in err and "STEPS, NAT" in err and "procs, nodes" in err


def test_bad_parameter_value_is_reported(bsp: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", bsp, "--grid", "NAT=many"]) == 1
    assert "NAT" in capsys.readouterr().err


def test_progress_only_when_asked_or_on_a_terminal(bsp: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", bsp, "--grid", "NAT=30,50", "--procs", "2"]) == 0
    assert "sweep" not in capsys.readouterr().err
    assert main(["sweep", bsp, "--grid", "NAT=30,50", "--procs", "2", "--progress"]) == 0
    assert "2/2" in capsys.readouterr().err


def test_progress_bar_draws_and_finishes() -> None:
    import io

    from uml2perf_runtime.output.progress import ProgressBar

    stream = io.StringIO()
    bar = ProgressBar(4, stream, True)
    for _ in range(4):
        bar.advance()
    bar.close()
    assert "4/4" in stream.getvalue() and "100%" in stream.getvalue() and stream.getvalue().endswith("\n")


def test_parse_grid_keeps_option_order() -> None:
    assert list(parse_grid(["b=1", "a=2,3"])) == ["b", "a"]


def test_missing_dask_or_scheduler_is_a_clear_error(
    ring: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("uml2perf.sweep.DASK_CONNECT_TIMEOUT", "0.5s")
    code = main(["sweep", ring, "--grid", "procs=2", "--dask", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert code == 1
    assert "uml2perf[dask]" in err or "Dask scheduler" in err


def test_dask_local_cluster(ring: str, capsys: pytest.CaptureFixture[str]) -> None:
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        data = sweep_json(
            capsys, ring, "--machine", GESCHER, "--grid", "procs=2,3", "--dask", cluster.scheduler_address
        )
    assert [r["procs"] for r in data["rows"]] == [2, 3]
    assert {r["method"] for r in data["rows"]} == {"simulation"}


def test_generated_module_can_be_swept(bsp: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "bsp_model.py"
    assert main(["convert", bsp, "-o", str(module)]) == 0
    capsys.readouterr()
    from_py = sweep_json(capsys, str(module), "--machine", GESCHER, "--grid", "procs=3,5")
    from_uml = sweep_json(capsys, bsp, "--machine", GESCHER, "--grid", "procs=3,5")
    assert [r["time"] for r in from_py["rows"]] == [r["time"] for r in from_uml["rows"]]


def test_zipped_axes_move_together(capsys):
    """``nodes:procs=1:4,2:8`` is one axis: the paper's N1P4 and N2P8, not their product."""
    from pathlib import Path

    from uml2perf.cli import main

    lapw0 = Path(__file__).resolve().parents[1] / "samples" / "lapw0.uml"
    code = main(
        [
            "sweep",
            str(lapw0),
            "--machine",
            "gescher",
            "--grid",
            "nodes:procs=1:4,2:8",
            "--grid",
            "NAT=32,64",
            "--workers",
            "1",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    rows = [line.split() for line in out.strip().splitlines()[1:]]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("1", "4", "32"),
        ("1", "4", "64"),
        ("2", "8", "32"),
        ("2", "8", "64"),
    ]


def test_zipped_axis_values_must_match_the_names(capsys):
    from pathlib import Path

    from uml2perf.cli import main

    lapw0 = Path(__file__).resolve().parents[1] / "samples" / "lapw0.uml"
    assert main(["sweep", str(lapw0), "--grid", "nodes:procs=1:4,2"]) == 2
    assert "must give 2 values" in capsys.readouterr().err


def test_a_sweep_over_processes_has_speedup_efficiency_and_non_scalability(tmp_path) -> None:
    import json as _json
    import subprocess as _sp
    import sys as _sys

    lapw0 = Path(__file__).resolve().parents[1] / "samples" / "lapw0.uml"
    done = _sp.run(
        [
            _sys.executable,
            "-m",
            "uml2perf",
            "sweep",
            str(lapw0),
            "--machine",
            "gescher",
            "--grid",
            "nodes:procs=1:4,2:8,4:16",
            "--json",
            "-",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    data = _json.loads(done.stdout)
    rows = {row["procs"]: row for row in data["rows"]}
    assert rows[4]["speedup"] == 1.0 and rows[4]["efficiency"] == 1.0
    assert rows[8]["speedup"] == pytest.approx(rows[4]["time"] / rows[8]["time"])
    assert rows[16]["efficiency"] == pytest.approx(rows[4]["time"] * 4 / (16 * rows[16]["time"]))
    assert rows[16]["inefficiency"] == pytest.approx(1 - rows[16]["efficiency"])
    (prop,) = data["properties"]
    efficiencies = [r["efficiency"] for r in data["rows"]]
    assert prop["property"] == "non_scalability"
    assert prop["severity"] == pytest.approx(sum(efficiencies) / 3 - min(efficiencies), abs=1e-6)


def test_sweep_plot_is_written_and_bad_formats_are_refused_before_the_sweep(tmp_path) -> None:
    import subprocess as _sp
    import sys as _sys

    pytest.importorskip("matplotlib")
    lapw0 = Path(__file__).resolve().parents[1] / "samples" / "lapw0.uml"
    target = tmp_path / "scaling.png"
    done = _sp.run(
        [
            _sys.executable,
            "-m",
            "uml2perf",
            "sweep",
            str(lapw0),
            "--grid",
            "procs=1,2,4",
            "--grid",
            "NAT=32,64",
            "--plot",
            str(target),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = _sp.run(
        [
            _sys.executable,
            "-m",
            "uml2perf",
            "sweep",
            str(lapw0),
            "--grid",
            "procs=1,2",
            "--plot",
            str(tmp_path / "x.nope"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and ".png" in bad.stderr and not (tmp_path / "x.nope").exists()


def _probabilistic_source():  # noqa: ANN202 - a test model
    import sys as _sys

    _sys.path.insert(0, str(Path(__file__).resolve().parent))
    from builders import ModelBuilder

    from uml2perf.generation import generate
    from uml2perf.sweep import ModelSource

    b = ModelBuilder("coin")
    main = b.activity("main", main=True)
    d, m = main.decision("D"), main.merge("M")
    short, long = main.action("Short", 1.0), main.action("Long", 3.0)
    main.chain(main.initial(), d)
    main.flow(d, short, probability=0.3)
    main.flow(d, long, probability=0.7)
    main.chain(short, m)
    main.chain(long, m)
    main.chain(m, main.final())
    return ModelSource(generate(b.build()).text, "coin.py")


def test_sweep_replications_give_mean_and_interval_per_point() -> None:
    from uml2perf.sweep import run_sweep
    from uml2perf_runtime import Machine

    result = run_sweep(
        _probabilistic_source(), Machine.default(), {"procs": [1]}, replications=200, workers=1
    )
    (row,) = result.rows
    assert row["method"] == "simulation"
    assert row["time_ci95_low"] < 2.4 < row["time_ci95_high"]  # E[T] = 0.3 * 1 + 0.7 * 3
    assert row["time_std"] == pytest.approx((0.3 * 0.7) ** 0.5 * 2.0, rel=0.15)
    assert result.columns[:5] == ("procs", "time", "time_std", "time_ci95_low", "time_ci95_high")


def test_parallel_replications_equal_sequential_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    from uml2perf import api

    hybrid = Path(__file__).resolve().parents[1] / "samples" / "hybrid.uml"
    sequential = api.predict(hybrid, procs=2, replications=4)
    monkeypatch.setattr(api, "PARALLEL_REPLICATIONS_AFTER", 0.0)
    parallel = api.predict(hybrid, procs=2, replications=4)
    assert parallel.replications == sequential.replications
