"""Machine files: parsing, defaults, validation messages, link classes, bundled machines."""

from __future__ import annotations

from pathlib import Path

import pytest

from uml2perf_runtime import Link, Machine, MachineError
from uml2perf_runtime.platform.machine import BUNDLED_DIR, DEFAULT_INTER_NODE, DEFAULT_INTRA_NODE

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "machines"


def write(tmp_path: Path, text: str, name: str = "m.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_gescher_is_the_performance_prophet_cluster():
    m = Machine.from_toml(SAMPLES / "gescher.toml")
    assert (m.name, m.nodes, m.cores_per_node, m.speed) == ("gescher", 16, 4, 1.0)
    assert m.cores == 64
    assert m.inter_node == Link(latency=100e-6, bandwidth=12.5e6)
    assert m.intra_node == Link(latency=5e-6, bandwidth=300e6)
    assert m.placement == "block"


@pytest.mark.parametrize("name", ["gescher", "laptop", "cluster-modern", "gpu-node"])
def test_sample_machines_load_and_match_the_bundled_copies(name):
    sample = SAMPLES / f"{name}.toml"
    m = Machine.from_toml(sample)
    assert m.name == name
    assert (BUNDLED_DIR / f"{name}.toml").read_bytes() == sample.read_bytes()
    assert Machine.load(name).to_dict() == m.to_dict()
    assert Machine.load(sample).name == name


def test_cluster_modern_values():
    m = Machine.from_toml(SAMPLES / "cluster-modern.toml")
    assert (m.nodes, m.cores_per_node, m.speed) == (64, 64, 4.0)
    assert m.inter_node.bandwidth == pytest.approx(12.5e9)
    assert m.collectives == {"allreduce": "recursive_doubling", "bcast": "binomial"}


def test_minimal_file_gets_defaults(tmp_path):
    m = Machine.from_toml(write(tmp_path, "nodes = 2\ncores_per_node = 3\n", "small.toml"))
    assert m.name == "small"  # from the file name
    assert m.speed == 1.0
    assert m.intra_node == DEFAULT_INTRA_NODE and m.inter_node == DEFAULT_INTER_NODE
    assert m.eager_limit is None and m.collectives == {} and m.placement == "block"
    assert m.source == str(tmp_path / "small.toml")


def test_full_file(tmp_path):
    text = """
name = "x"
nodes = 4
cores_per_node = 2
speed = 2
[network]
eager_limit = 1024
[network.intra_node]
latency = 1e-6
bandwidth = 1e9
[network.inter_node]
latency = 1e-5
bandwidth = 1e8
[collectives]
allreduce = "ring"
bcast = "scatter_allgather"
[placement]
policy = "round_robin"
"""
    m = Machine.from_toml(write(tmp_path, text))
    assert m.speed == 2.0 and isinstance(m.speed, float)
    assert m.eager_limit == 1024
    assert m.collectives == {"allreduce": "ring", "bcast": "scatter_allgather"}
    assert m.placement == "round_robin"
    assert m.link(1, 1) is m.intra_node
    assert m.link(0, 3) is m.inter_node
    assert m.link(0, 3).time(1e8) == pytest.approx(1e-5 + 1.0)
    assert Machine.from_dict(m.to_dict(), source="again").to_dict() == m.to_dict()


def test_partial_link_table_keeps_default_for_missing_key(tmp_path):
    m = Machine.from_toml(
        write(tmp_path, "nodes = 1\ncores_per_node = 1\n[network.inter_node]\nlatency = 0.5\n")
    )
    assert m.inter_node == Link(0.5, DEFAULT_INTER_NODE.bandwidth)


def test_unknown_top_level_key_names_it_and_the_allowed_keys(tmp_path):
    path = write(tmp_path, "nodes = 1\ncores_per_node = 1\ncores = 4\n")
    with pytest.raises(MachineError) as info:
        Machine.from_toml(path)
    text = str(info.value)
    assert str(path) in text and "'cores'" in text and "the top level" in text
    assert "name, nodes, cores_per_node, speed, network, collectives, placement" in text


def test_unknown_key_in_a_link_table(tmp_path):
    path = write(tmp_path, "nodes = 1\ncores_per_node = 1\n[network.inter_node]\nlatency = 1\nbandwith = 5\n")
    with pytest.raises(MachineError, match=r"unknown key 'bandwith' in \[network.inter_node\]") as info:
        Machine.from_toml(path)
    assert "latency, bandwidth" in str(info.value)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("nodes = 1\ncores_per_node = -2\n", "cores_per_node must be a whole number of at least 1, got -2"),
        ("nodes = 0\ncores_per_node = 2\n", "nodes must be a whole number of at least 1, got 0"),
        ("nodes = 1.5\ncores_per_node = 2\n", "nodes must be a whole number"),
        ("nodes = true\ncores_per_node = 2\n", "nodes must be a whole number"),
        ("nodes = 1\ncores_per_node = 2\nspeed = 0\n", "speed must be a positive number"),
        ('nodes = 1\ncores_per_node = 2\nspeed = "fast"\n', "speed must be a positive number"),
        (
            "nodes = 1\ncores_per_node = 2\n[network.intra_node]\nbandwidth = -1\n",
            "[network.intra_node] bandwidth must be a positive number",
        ),
        (
            'nodes = 1\ncores_per_node = 2\n[network.inter_node]\nlatency = "soon"\n',
            "[network.inter_node] latency: 'soon' is not a number with a unit (expected seconds",
        ),
        (
            "nodes = 1\ncores_per_node = 2\n[network]\neager_limit = -5\n",
            "eager_limit must be a whole number",
        ),
        ('nodes = 1\ncores_per_node = 2\n[placement]\npolicy = "scatter"\n', "policy must be one of"),
        ("nodes = 1\ncores_per_node = 2\nnetwork = 3\n", "'network' must be a table"),
        ("cores_per_node = 2\n", "missing key 'nodes'"),
        ("nodes = 2\n", "missing key 'cores_per_node'"),
        ('nodes = 1\ncores_per_node = 2\nname = ""\n', "name must be a non-empty string"),
    ],
)
def test_bad_values_are_explained(tmp_path, text, fragment):
    path = write(tmp_path, text)
    with pytest.raises(MachineError) as info:
        Machine.from_toml(path)
    assert fragment in str(info.value)
    assert str(path) in str(info.value)


def test_collectives_are_checked(tmp_path):
    path = write(tmp_path, 'nodes = 1\ncores_per_node = 1\n[collectives]\nallreduc = "ring"\n')
    with pytest.raises(MachineError, match="unknown key 'allreduc' in \\[collectives\\]"):
        Machine.from_toml(path)
    path = write(tmp_path, 'nodes = 1\ncores_per_node = 1\n[collectives]\nallreduce = "magic"\n')
    with pytest.raises(MachineError) as info:
        Machine.from_toml(path)
    assert "'magic' is not an algorithm of allreduce" in str(info.value)
    assert "recursive_doubling" in str(info.value)
    path = write(tmp_path, "nodes = 1\ncores_per_node = 1\n[collectives]\nbcast = 3\n")
    with pytest.raises(MachineError, match="must name an algorithm"):
        Machine.from_toml(path)


def test_missing_file():
    with pytest.raises(MachineError) as info:
        Machine.from_toml("/nonexistent/machine.toml")
    assert "machine file '/nonexistent/machine.toml' not found" in str(info.value)
    assert "hint" in str(info.value)


def test_invalid_toml_reports_position(tmp_path):
    path = write(tmp_path, "nodes = 1\ncores_per_node = = 2\n")
    with pytest.raises(MachineError) as info:
        Machine.from_toml(path)
    assert str(path) in str(info.value) and "not valid TOML" in str(info.value)
    assert "line 2" in str(info.value)


def test_load_unknown_name_lists_bundled_machines():
    with pytest.raises(MachineError) as info:
        Machine.load("no-such-machine")
    assert "gescher" in str(info.value) and "laptop" in str(info.value)
    assert Machine.bundled() == ["cluster-modern", "gescher", "gpu-node", "laptop", "narval"]


def test_default_and_with_nodes():
    m = Machine.default()
    assert m.nodes == 1 and m.cores_per_node == 4 and m.speed == 1.0
    bigger = m.with_nodes(8)
    assert bigger.nodes == 8 and bigger.cores == 32 and m.nodes == 1
    with pytest.raises(MachineError):
        m.with_nodes(0)


def test_constructor_validates_too():
    with pytest.raises(MachineError, match="cores_per_node"):
        Machine(nodes=1, cores_per_node=0)
    with pytest.raises(MachineError, match="placement"):
        Machine(placement="random")
