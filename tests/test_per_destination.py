"""Blocks whose size differs per rank (``MPI_Gatherv``, ``Scatterv``, ``Allgatherv``, ``Alltoallv``).

A collective's ``size`` that reads ``pid`` gives each rank its own block in gather+, scatter+
and allgather+; an alltoall+'s ``size`` may read ``dest``, the rank each block goes to.  The
model (tests/data/one_collective.uml) makes one call; on a machine whose messages take a latency
``A`` plus ``bytes / B`` (no eager limit in reach), each expected time below is the schedule of
``docs/runtime-semantics.md`` worked by hand: a round lasts as long as its largest block.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from command_helpers import predicted, uml2perf

DATA = Path(__file__).resolve().parent / "data"
A = 1e-6
B = 1e9
_MACHINE = f"""name = "flat"
nodes = 2
cores_per_node = 8
speed = 1.0
[network]
eager_limit = 1000000000000000
[network.intra_node]
latency = {A}
bandwidth = {B}
[network.inter_node]
latency = {A}
bandwidth = {B}
"""


def _model(tmp_path: Path, stereotype: str, tags: str, name: str = "model.uml") -> Path:
    text = (DATA / "one_collective.uml").read_text().replace("STEREOTYPE", stereotype).replace("TAGS", tags)
    path = tmp_path / name
    path.write_text(text)
    return path


def _machine(tmp_path: Path, collectives: str = "", topology: bool = False) -> Path:
    path = tmp_path / "flat.toml"
    path.write_text(_MACHINE + (f"[collectives]\n{collectives}\n" if collectives else ""))
    return path


def _ends(model: Path, machine: Path, procs: int, *more: str) -> list[float]:
    result = predicted(model, "--machine", machine, "--procs", str(procs), *more)
    return [row["time"] for row in sorted(result["per_process"], key=lambda row: row["pid"])]


def _close(ends: list[float], expected: list[float]) -> None:
    assert ends == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_alltoallv_prices_each_pair_its_own_block(tmp_path: Path) -> None:
    """3 ranks, M[s][d] = (1 + s + 3 d) MB.  Round 1 (r -> r+1): 4, 8, 3 MB; round 2 (r -> r+2):
    7, 2, 6 MB.  Every rank ends after 2 A + (8 + 7) MB / B."""
    model = _model(tmp_path, "AllToAllPlus", 'size="N * (1 + pid + 3 * dest)"')
    expected = 2 * A + 15e6 / B
    _close(_ends(model, _machine(tmp_path), 3), [expected] * 3)


def test_alltoallv_with_equal_blocks_is_the_alltoall(tmp_path: Path) -> None:
    machine = _machine(tmp_path)
    per_dest = _ends(_model(tmp_path, "AllToAllPlus", 'size="N + 0 * dest"', "a.uml"), machine, 4)
    plain = _ends(_model(tmp_path, "AllToAllPlus", 'size="N"', "b.uml"), machine, 4)
    assert per_dest == pytest.approx(plain, rel=1e-12)


@pytest.mark.parametrize(
    "algorithm, expected",
    [
        # binomial, blocks 1, 2, 3, 4 MB: round 0 ranks 1 -> 0 (2 MB) and 3 -> 2 (4 MB);
        # round 1 rank 2 -> 0 with its subtree's 3 + 4 MB
        ("binomial", [2 * A + 11e6 / B, A + 4e6 / B, 2 * A + 11e6 / B, A + 4e6 / B]),
        # linear: the root takes rank 1's 2 MB, then rank 2's 3 MB, then rank 3's 4 MB
        ("linear", [3 * A + 9e6 / B, A + 2e6 / B, 2 * A + 5e6 / B, 3 * A + 9e6 / B]),
    ],
)
def test_gatherv(tmp_path: Path, algorithm: str, expected: list[float]) -> None:
    model = _model(tmp_path, "GatherPlus", 'root="0" size="N * (pid + 1)"')
    _close(_ends(model, _machine(tmp_path, f'gather = "{algorithm}"'), 4), expected)


def test_gatherv_to_another_root_takes_the_blocks_in_its_order(tmp_path: Path) -> None:
    """Root 2: virtual ranks 0..3 are 2, 3, 0, 1 with blocks 3, 4, 1, 2 MB.  Round 0: 3 -> 2
    (4 MB) and 1 -> 0 (2 MB); round 1: 0 -> 2 with 1 + 2 MB."""
    model = _model(tmp_path, "GatherPlus", 'root="2" size="N * (pid + 1)"')
    ends = _ends(model, _machine(tmp_path), 4)
    _close(ends, [2 * A + 7e6 / B, A + 4e6 / B, 2 * A + 7e6 / B, A + 4e6 / B])


def test_scatterv_binomial(tmp_path: Path) -> None:
    """Each rank receives (pid + 1) MB: round 1 root -> 2 with 3 + 4 MB, round 2 root -> 1
    (2 MB) and 2 -> 3 (4 MB)."""
    model = _model(tmp_path, "ScatterPlus", 'root="0" size="N * (pid + 1)"')
    end = 2 * A + 11e6 / B
    _close(_ends(model, _machine(tmp_path), 4), [end] * 4)


@pytest.mark.parametrize(
    "algorithm, expected",
    [
        ("ring", 2 * A + 6e6 / B),  # each of 2 rounds carries all three blocks: the 3 MB one lasts
        ("bruck", 2 * A + 6e6 / B),  # each round sends one block per rank
    ],
)
def test_allgatherv(tmp_path: Path, algorithm: str, expected: float) -> None:
    model = _model(tmp_path, "AllGatherPlus", 'size="N * (pid + 1)"')
    _close(_ends(model, _machine(tmp_path, f'allgather = "{algorithm}"'), 3), [expected] * 3)


def test_allgatherv_recursive_doubling(tmp_path: Path) -> None:
    """4 ranks, blocks 1..4 MB: round 0 pairs exchange their own (largest 4 MB), round 1 the
    pair's two blocks (largest 3 + 4 MB)."""
    model = _model(tmp_path, "AllGatherPlus", 'size="N * (pid + 1)"')
    machine = _machine(tmp_path, 'allgather = "recursive_doubling"')
    _close(_ends(model, machine, 4), [2 * A + 11e6 / B] * 4)


@pytest.mark.parametrize(
    "algorithm, procs, expected",
    [
        # 3 ranks, blocks 1..3 MB: each of the 2 rounds passes on one partial block per rank,
        # the 3 MB one among them
        ("ring", 3, 2 * A + 6e6 / B),
        # 4 ranks, blocks 1..4 MB: round 0 sends the half the partner keeps (ranks 0 and 1
        # send blocks 3 + 4), round 1 one block (rank 2 sends block 4)
        ("recursive_halving", 4, 2 * A + 11e6 / B),
    ],
)
def test_reduce_scatter_with_counts_per_rank(
    tmp_path: Path, algorithm: str, procs: int, expected: float
) -> None:
    """``MPI_Reduce_scatter``: each rank's ``size`` is the block it ends with."""
    model = _model(tmp_path, "ReduceScatterPlus", 'size="N * (pid + 1)"')
    _close(_ends(model, _machine(tmp_path, f'reduce_scatter = "{algorithm}"'), procs), [expected] * procs)


def test_the_links_route_prices_the_blocks_too(tmp_path: Path) -> None:
    """On a machine with a topology (narval, shared links) Alltoallv's rounds run as flows: the
    larger blocks take longer than equal blocks of the smallest size."""
    narval = Path(__file__).resolve().parents[1] / "samples" / "machines" / "narval.toml"
    args = ("--nodes", "2", "--placement", "round_robin")
    small = predicted(
        _model(tmp_path, "AllToAllPlus", 'size="N"', "s.uml"), "--machine", narval, "--procs", "4", *args
    )
    varied = predicted(
        _model(tmp_path, "AllToAllPlus", 'size="N * (1 + dest)"', "v.uml"),
        "--machine",
        narval,
        "--procs",
        "4",
        *args,
    )
    assert small["links"] and varied["links"]
    assert varied["time"] > 2 * small["time"]


@pytest.mark.parametrize(
    "stereotype, tags, procs",
    [
        ("GatherPlus", 'root="1" size="N * (pid + 1)"', 4),
        ("ScatterPlus", 'root="0" size="N * (pid + 1)"', 5),
        ("AllGatherPlus", 'size="N * (pid + 1)"', 4),
        ("AllToAllPlus", 'size="N * (1 + pid + 3 * dest)"', 3),
        ("AllToAllPlus", 'size="N * (1 + pid)"', 3),  # one size per rank: that many bytes to each
        ("AllGatherPlus", 'size="N"', 4),  # equal blocks: the collective as before
        ("ReduceScatterPlus", 'size="N * (pid + 1)"', 4),
    ],
)
def test_the_sweep_agrees_with_the_simulator(tmp_path: Path, stereotype: str, tags: str, procs: int) -> None:
    """The analytic path prices per-rank blocks as the simulator does, at every grid point."""
    import uml2perf as api

    model = _model(tmp_path, stereotype, tags)
    machine = _machine(tmp_path)
    rows = api.sweep(model, {"procs": [procs], "N": [1000, 3000000]}, machine=machine, workers=1).rows
    for row in rows:
        assert row["method"] == "analytic"
        simulated = api.predict(model, machine=machine, procs=procs, overrides={"N": row["N"]})
        assert row["time"] == pytest.approx(simulated.time, rel=1e-12)


def test_a_negative_block_is_an_error_naming_the_destination(tmp_path: Path) -> None:
    model = _model(tmp_path, "AllToAllPlus", 'size="N * (1 - dest)"')
    out = tmp_path / "out.json"
    done = uml2perf("run", model, "--machine", _machine(tmp_path), "--procs", "3", "--trace", out)
    assert done.returncode != 0 and not out.exists()
    assert "model.uml: 'Exchange' (xmi:id=_c_x, line 9) on process 0" in done.stderr
    assert "the size of the block for dest = 2 is -1000000" in done.stderr
    assert "non-negative number of bytes" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "stereotype, tags, words",
    [
        ("GatherPlus", 'size="N * dest"', "reads 'dest', the rank a block goes to, which only alltoall+ has"),
        ("AllToAllPlus", 'size="N * dst"', "uses 'dst', which is neither a model variable"),
    ],
)
def test_a_bad_size_expression_is_a_model_error(
    tmp_path: Path, stereotype: str, tags: str, words: str
) -> None:
    model = _model(tmp_path, stereotype, tags)
    out = tmp_path / "model.py"
    done = uml2perf("convert", model, "-o", out)
    assert done.returncode != 0 and not out.exists()
    assert words in done.stderr and "_c_x" in done.stderr and "Traceback" not in done.stderr


def test_check_accepts_dest_in_an_alltoall_size_only(tmp_path: Path) -> None:
    fine = uml2perf("check", _model(tmp_path, "AllToAllPlus", 'size="N * (1 + dest)"', "fine.uml"))
    assert fine.returncode == 0, fine.stdout + fine.stderr
    bad = uml2perf("check", _model(tmp_path, "GatherPlus", 'size="N * dest"', "bad.uml"))
    assert bad.returncode != 0 and "dest" in bad.stdout + bad.stderr


def test_the_generated_code_gives_one_size_per_destination(tmp_path: Path) -> None:
    out = tmp_path / "model.py"
    done = uml2perf("convert", _model(tmp_path, "AllToAllPlus", 'size="N * (1 + pid + 3 * dest)"'), "-o", out)
    assert done.returncode == 0, done.stderr
    assert "size=[v.N * (1 + p.pid + 3 * dest) for dest in range(p.nprocs)]" in out.read_text()


@pytest.mark.parametrize("p", [2, 3, 4, 5, 8])
def test_equal_blocks_schedule_as_the_fixed_size_collective(p: int) -> None:
    """Every block schedule, at every root and on one or two nodes, times equal blocks as the
    fixed-size schedule does: the per-rank forms generalise the algorithms, they do not change them."""
    from uml2perf_runtime.platform.machine import Machine
    from uml2perf_runtime.platform.network import BLOCK_ALGORITHMS, CollectiveModel

    machine = Machine.load("cluster-modern")
    n = 3000.0
    for node_of in ([0] * p, [r % 2 for r in range(p)]):
        for kind, table in BLOCK_ALGORITHMS.items():
            for algorithm in table:
                model = CollectiveModel.for_machine(machine, node_of)
                model.algorithms[kind] = algorithm
                blocks: tuple = (tuple([n] * p),) * p if kind == "alltoall" else tuple([n] * p)
                for root in range(p):
                    fixed = model.offsets(kind, root, n)
                    assert model.block_offsets(kind, root, blocks) == pytest.approx(fixed, rel=1e-12)


def test_a_binomial_gather_carries_each_subtree_s_blocks() -> None:
    """5 ranks, blocks 1..5: round 0 ranks 1 -> 0 and 3 -> 2 carry their own; round 1 rank 2 ->
    0 carries 3 + 4; round 2 rank 4 -> 0 carries 5."""
    from uml2perf_runtime.platform.network import block_schedule

    steps = block_schedule("gather", "binomial", 5, (1.0, 2.0, 3.0, 4.0, 5.0))
    assert [(s.src, s.dst, s.nbytes) for s in steps] == [
        ([1, 3], [0, 2], [2.0, 4.0]),
        ([2], [0], [7.0]),
        ([4], [0], [5.0]),
    ]


def test_a_negative_block_of_one_rank_is_an_error_naming_the_rank(tmp_path: Path) -> None:
    model = _model(tmp_path, "GatherPlus", 'size="N * (1 - pid)"')
    report = tmp_path / "report.html"
    done = uml2perf("run", model, "--machine", _machine(tmp_path), "--procs", "3", "--report", report)
    assert done.returncode != 0 and not report.exists()
    assert "'Exchange' (xmi:id=_c_x, line 9) on process 2: message size is -1000000" in done.stderr
    assert "non-negative number of bytes" in done.stderr and "Traceback" not in done.stderr
