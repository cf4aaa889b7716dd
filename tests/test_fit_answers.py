"""What ``fit`` answers must be usable as is: warnings where the model misses the ends of the
measured range, log axes for sizes that grow geometrically, a sidecar ``run`` can use, the element
named in every output."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

from uml2perf import api
from uml2perf.cli import main
from uml2perf.fit import fit_model, log_axes, read_measurements

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
ZERO = Path(__file__).resolve().parent / "data" / "zero"


def _nlogn(path: Path, smallest: int, seed: int, reps: int = 5) -> Path:
    """t = 2e-9 n log2 n with 3% noise at n = 2^smallest .. 4096."""
    rng = np.random.default_rng(seed)
    rows = ["n,time"]
    for k in range(smallest, 13):
        n = 2**k
        rows += [f"{n},{2e-9 * n * math.log2(n) * (1 + 0.03 * rng.standard_normal())!r}" for _ in range(reps)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _kinked(path: Path, end: str, seed: int = 1) -> Path:
    """t = 2e-9 n log2 n with 3% noise at n = 64 .. 4096, and one end off the trend (2x the time
    at the smallest size: a fixed cost that only shows there; 1.6x at the largest: data that no
    longer fits in a cache)."""
    rng = np.random.default_rng(seed)
    rows = ["n,time"]
    for k in range(6, 13):
        n = 2**k
        factor = 2.0 if (end == "smallest" and k == 6) else 1.6 if (end == "largest" and k == 12) else 1.0
        rows += [
            f"{n},{factor * 2e-9 * n * math.log2(n) * (1 + 0.03 * rng.standard_normal())!r}" for _ in range(5)
        ]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_the_fit_on_relative_errors_holds_both_ends_of_a_smooth_cost(tmp_path: Path) -> None:
    """t = 2e-9 n log2 n with 3% noise: the right term and both ends within the fit's own interval
    (least squares on absolute errors sent the small sizes off, and chose n^(5/4) from 2..4096)."""
    for smallest, seed, reps in ((6, 1, 5), (1, 1, 3)):
        path = _nlogn(tmp_path / "t.csv", smallest, seed=seed, reps=reps)
        (model,) = [fit_model(data) for data in read_measurements(str(path))]
        assert "n * log2(n)" in model.expression()
        assert not any(check["outside"] for check in model.edge_checks())


def test_a_model_that_misses_the_smallest_sizes_is_a_warning(tmp_path: Path, capsys) -> None:
    """The smallest size off the trend of the others: left out, it is missed by more than the interval."""
    path = _kinked(tmp_path / "t.csv", "smallest")
    (model,) = [fit_model(data) for data in read_measurements(str(path))]
    smallest = next(c for c in model.edge_checks() if c["end"] == "smallest")
    assert smallest["outside"] and abs(smallest["error"]) > smallest["interval"]
    assert main(["fit", str(path)]) == 0
    err = capsys.readouterr().err
    assert "fitted without its smallest point (n=64)" in err and "not to be trusted" in err
    assert main(["fit", str(path), "--json"]) == 0
    ends = {end["end"]: end for end in json.loads(capsys.readouterr().out)["ends"]}
    assert ends["smallest"]["outside"] and ends["largest"]["at"] == {"n": 4096.0}


def test_a_model_that_holds_at_both_ends_is_quiet(tmp_path: Path, capsys) -> None:
    path = _nlogn(tmp_path / "t.csv", 6, seed=0)
    (model,) = [fit_model(data) for data in read_measurements(str(path))]
    assert not any(check["outside"] for check in model.edge_checks())
    assert main(["fit", str(path)]) == 0
    assert capsys.readouterr().err == ""


def test_sizes_that_grow_geometrically_get_log_axes(tmp_path: Path, monkeypatch) -> None:
    assert log_axes(np.array([8.0, 64.0, 4096.0]), np.array([1e-7, 1e-6, 1e-4])) == (True, True)
    assert log_axes(np.array([1.0, 2.0, 3.0]), np.array([-1.0, 1.0, 2.0])) == (False, False)
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    drawn = []
    monkeypatch.setattr(plt, "close", lambda fig: drawn.append(fig))
    path = _nlogn(tmp_path / "t.csv", 3, seed=0)
    assert main(["fit", str(path), "--plot", str(tmp_path / "fit.png")]) == 0
    (ax,) = drawn[0].axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert (tmp_path / "fit.png").stat().st_size > 0


def test_the_sidecar_declares_its_parameters_so_run_can_use_it(tmp_path: Path, capsys) -> None:
    """Regression: the cost was written in n with n declared nowhere, and run --sidecar failed."""
    data = _nlogn(tmp_path / "load.csv", 6, seed=0)
    sidecar = tmp_path / "costs.toml"
    assert main(["fit", str(data), "--name", "Load", "--sidecar", str(sidecar)]) == 0
    written = tomllib.loads(sidecar.read_text())
    assert written["variables"] == {"n": "4096"}
    assert "# n: a parameter of the measurements" in sidecar.read_text()
    result = api.predict(ZERO / "behaviour-calls.uml", procs=1, sidecar=sidecar, default_cost=1.0)
    cost = 2e-9 * 4096 * 12  # the fitted cost at n = 4096, within the noise
    assert result.time == pytest.approx(1.0 + cost, rel=1e-5)


def test_as_writes_a_parameter_as_a_model_variable(tmp_path: Path, capsys) -> None:
    rows = ["atoms,time"] + [f"{n},{0.5 * n + 0.1}" for n in (8, 16, 32, 64, 128) for _ in range(2)]
    (tmp_path / "sft.csv").write_text("\n".join(rows) + "\n")
    sidecar = tmp_path / "sft.toml"
    assert (
        main(
            [
                "fit",
                str(tmp_path / "sft.csv"),
                "--name",
                "SFT",
                "--as",
                "atoms=NAT",
                "--sidecar",
                str(sidecar),
            ]
        )
        == 0
    )
    written = tomllib.loads(sidecar.read_text())
    assert "variables" not in written and "NAT" in written["elements"]["SFT"]["cost"]
    warnings: list[str] = []
    result = api.predict(
        SAMPLES / "lapw0.uml", procs=1, sidecar=sidecar, warnings=warnings, overrides={"NAT": 32}
    )
    assert result.element("SFT")["inclusive"] == pytest.approx(0.5 * 32 + 0.1, rel=1e-6)
    # the drawn cost it replaces is named, not replaced silently
    assert any("replaces the cost 'DoSFT(NAT)' drawn in the model" in w for w in warnings), warnings
    capsys.readouterr()
    assert main(["fit", str(tmp_path / "sft.csv"), "--as", "atom=NAT"]) == 2
    assert "no parameter 'atom' (did you mean 'atoms'?)" in capsys.readouterr().err


def test_json_names_the_element_given_with_name(tmp_path: Path, capsys) -> None:
    """Regression: fit --json --name X printed "element": null."""
    data = _nlogn(tmp_path / "t.csv", 6, seed=0)
    assert main(["fit", str(data), "--json", "--name", "Load"]) == 0
    assert json.loads(capsys.readouterr().out)["element"] == "Load"


def test_a_model_that_misses_the_largest_size_is_a_warning(tmp_path: Path) -> None:
    """The largest size off the trend (out of cache): left out, the largest point, where strong
    scaling uses the cost, is missed by more than the fit's own interval."""
    path = _kinked(tmp_path / "t.csv", "largest")
    (model,) = [fit_model(data) for data in read_measurements(str(path))]
    largest = next(c for c in model.edge_checks() if c["end"] == "largest")
    assert largest["at"] == {"n": 4096.0} and largest["outside"]
    assert "fitted without its largest point (n=4096)" in (model.warning() or "")
    assert "predictions beyond the measured range" in (model.warning() or "")
