"""Machine parameters: nodes, cores, relative speed, network, collectives, placement.

A machine file is TOML (the bundled ones are in ``runtime/platform/machines/``)::

    name = "gescher"
    nodes = 16
    cores_per_node = 4
    speed = 1.0                      # costs are divided by it (default 1.0)

    [network]
    eager_limit = 65536              # optional, bytes

    [network.intra_node]             # between processes of one node
    latency = 5e-6                   # seconds
    bandwidth = 300e6                # bytes per second

    [network.inter_node]             # between nodes
    latency = 100e-6
    bandwidth = 12.5e6
    handshake = 200e-6               # optional: rendezvous handshake above the eager limit
    # instead of latency/bandwidth, per message-size range (the last one open-ended) ...
    # ranges = [{ up_to = "4 KiB", latency = 5e-6, bandwidth = 1e9 }, { latency = 8e-6, bandwidth = 3e9 }]
    # ... or measured [size, seconds] points, interpolated piecewise-linearly in the size
    # table = [[8, 5e-6], [4096, 9e-6], [1048576, 4e-4]]

    [collectives]                    # optional algorithm choices
    allreduce = "recursive_doubling"
    bcast = "binomial"
    overhead = 2e-6                  # optional: seconds every rank spends per collective call
    reduce_cost = 2.5e-10            # optional: seconds per byte of reduction arithmetic

    [placement]
    policy = "block"                 # or "round_robin"

    [threads]                        # optional: thread costs of task pools and pipelines
    start = 40e-6                    # seconds to start one thread
    handoff = 6e-6                   # seconds per item handed on, under the process's one lock
    overhead = 0.0                   # seconds per item handed on, in parallel
    wakeup = 20e-6                   # seconds a thread that waited for an item takes to resume

    [allocator]                      # optional: when an action's 'fresh' bytes are new pages
    reuse_below = 2                  # kept for reuse while fresh < reuse_below x allocation
    mapped_from = "32 MiB"           # blocks this large are always new pages

``nodes`` and ``cores_per_node`` are required; when a network table is
missing, the defaults of :data:`DEFAULT_INTRA_NODE` / :data:`DEFAULT_INTER_NODE`
apply (shared memory; 10 Gb/s Ethernet).  Unknown keys are errors naming the
allowed keys and the closest one, because a misspelt key silently ignored would
give a wrong prediction without a word; every problem of a file is reported at
once.  The link keys are described in ``docs/runtime-semantics.md`` (section 2).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.records import FrozenRecord
from ..errors import MachineError
from ..operations.registry import COLLECTIVES

if TYPE_CHECKING:  # a machine file's topology is read by .topology, imported when a file has one
    from .topology import Topology

PLACEMENTS = ("block", "round_robin")

#: Messages up to this many bytes use the eager protocol unless the machine says otherwise.
DEFAULT_EAGER_LIMIT = 64 * 1024
#: Machine files installed with the runtime (copies of ``samples/machines``).
BUNDLED_DIR = Path(__file__).resolve().parent / "machines"
#: The name of the built-in machine (``Machine.default()``), which ``Machine.load`` also accepts.
DEFAULT_NAME = "default"
#: Collective operations whose algorithm a machine file may choose (the table's collectives).
COLLECTIVE_OPERATIONS = COLLECTIVES
#: A machine file's text and what it is (for messages) to its table: see :meth:`Machine.from_toml`.
TomlParser = Callable[[str, str], dict[str, Any]]


class Link(FrozenRecord):
    """One class of network link: what a message of ``size`` bytes costs on it.

    A plain link is one line, ``latency + size / bandwidth``.  A link with ``pieces`` has one
    line per message-size range (from ``ranges`` or a measured ``table`` in the machine file):
    ``pieces`` is a tuple of ``(up_to, alpha, beta)`` in increasing ``up_to``, the last one
    ``inf``; a message of ``size`` bytes takes ``alpha + size * beta`` of the first piece with
    ``size <= up_to``.  ``handshake`` is the rendezvous handshake: seconds a message above the
    eager limit pays once both sides are there, before its data moves (0: none).  ``latency``
    and ``bandwidth`` of a link with pieces describe it (small-message latency, bandwidth of the
    largest messages); its costs come from the pieces.
    """

    latency: float
    bandwidth: float
    handshake: float
    pieces: tuple[tuple[float, float, float], ...] | None

    __slots__ = _FIELDS = ("latency", "bandwidth", "handshake", "pieces")

    def __init__(
        self,
        latency: float,
        bandwidth: float,
        handshake: float = 0.0,
        pieces: tuple[tuple[float, float, float], ...] | None = None,
    ) -> None:
        put = object.__setattr__
        put(self, "latency", latency)
        put(self, "bandwidth", bandwidth)
        put(self, "handshake", handshake)
        put(self, "pieces", pieces)

    @property
    def sized(self) -> bool:
        """True when a message's cost is more than one latency/bandwidth line (pieces or handshake)."""
        return self.pieces is not None or self.handshake > 0.0

    def piece(self, size: float) -> tuple[float, float]:
        """``(alpha, beta)`` of the line that prices a message of ``size`` bytes (seconds, s/byte)."""
        pieces = self.pieces
        if pieces is None:
            return float(self.latency), 0.0 if self.bandwidth == math.inf else 1.0 / float(self.bandwidth)
        for up_to, alpha, beta in pieces:
            if size <= up_to:
                return alpha, beta
        return pieces[-1][1], pieces[-1][2]  # pragma: no cover - the last piece reaches inf

    def time(self, size: float) -> float:
        """Transfer time of a message of ``size`` bytes over this link (without the handshake)."""
        if self.pieces is None:
            return self.latency + size / self.bandwidth
        alpha, beta = self.piece(size)
        return alpha + size * beta

    def message_time(self, size: float, eager_limit: float) -> float:
        """:meth:`time` plus the handshake when ``size`` is above ``eager_limit`` (rendezvous)."""
        return self.time(size) + (self.handshake if size > eager_limit else 0.0)


DEFAULT_INTRA_NODE = Link(latency=1e-6, bandwidth=10e9)
DEFAULT_INTER_NODE = Link(latency=20e-6, bandwidth=1.25e9)

_TOP_KEYS = (
    "name",
    "nodes",
    "cores_per_node",
    "speed",
    "network",
    "collectives",
    "placement",
    "peak_flops",
    "memory_bandwidth",
    "core_bandwidth",
    "devices",
    "background_load",
    "threads",
    "variability",
    "caches",
    "first_touch",
    "call_cost",
    "allocator",
    "counting_factor",
    "operations",
)
_DEVICE_KEYS = ("count", "peak_flops", "memory_bandwidth", "link")


class Device(FrozenRecord):
    """An accelerator kind of every node: ``count`` devices, their peaks, and one host link each."""

    name: str
    count: int
    peak_flops: float
    memory_bandwidth: float
    link: Link

    _FIELDS = ("name", "count", "peak_flops", "memory_bandwidth", "link")

    def __init__(
        self,
        name: str,
        count: int,
        peak_flops: float,
        memory_bandwidth: float,
        link: Link,
    ) -> None:
        put = object.__setattr__
        put(self, "name", name)
        put(self, "count", count)
        put(self, "peak_flops", peak_flops)
        put(self, "memory_bandwidth", memory_bandwidth)
        put(self, "link", link)


class ThreadCosts(FrozenRecord):
    """``[threads]``: what starting a thread and handing an item to one cost (seconds).

    Task pools and pipelines without ``startup``, ``handoff`` or ``overhead``
    tags take these: ``start`` per thread they start, ``handoff`` per item
    while holding the process's one hand-off lock (serialised, like an
    interpreter lock or a shared queue's lock), ``overhead`` per item in parallel,
    ``wakeup`` whenever a thread that waited for an item resumes (under the lock).
    """

    start: float
    handoff: float
    overhead: float
    wakeup: float

    __slots__ = _FIELDS = ("start", "handoff", "overhead", "wakeup")

    def __init__(
        self, start: float = 0.0, handoff: float = 0.0, overhead: float = 0.0, wakeup: float = 0.0
    ) -> None:
        put = object.__setattr__
        put(self, "start", start)
        put(self, "handoff", handoff)
        put(self, "overhead", overhead)
        put(self, "wakeup", wakeup)


class Allocator(FrozenRecord):
    """``[allocator]``: when memory an action allocates anew (its ``fresh`` bytes) is new pages.

    A program's allocator keeps memory freed by one iteration for the next, up to a point:
    glibc's ``malloc`` serves a block below its mapping threshold from its heap, raises that
    threshold to the size of the largest mapped block freed (so a loop's temporaries soon come
    from the heap), and gives the heap's free top back to the system once it reaches twice
    the threshold.  An action whose ``fresh`` bytes stay below ``reuse_below`` times its
    ``allocation`` reuses pages it touched before; more, or any block of ``mapped_from``
    bytes or more (always mapped anew), costs ``first_touch``.  ``uml2perf calibrate``
    measures both in a loop of numpy temporaries.
    """

    reuse_below: float
    mapped_from: float

    __slots__ = _FIELDS = ("reuse_below", "mapped_from")

    def __init__(self, reuse_below: float = 0.0, mapped_from: float = math.inf) -> None:
        put = object.__setattr__
        put(self, "reuse_below", reuse_below)
        put(self, "mapped_from", mapped_from)

    def new_pages(self, fresh: float, allocation: float) -> bool:
        """Whether ``fresh`` bytes in blocks of ``allocation`` bytes are pages touched for the first time."""
        return fresh >= self.reuse_below * allocation or allocation >= self.mapped_from


class CacheLevel(FrozenRecord):
    """One row of ``[caches] levels``: how fast data that fits in ``up_to`` bytes per core streams.

    A roofline action whose working set (its ``footprint``, by default its ``bytes``) fits in
    ``up_to`` bytes streams at ``core_bandwidth`` alone and shares ``bandwidth`` with the other
    actions of its node that stream from the same level; beyond the last level, the node's
    ``memory_bandwidth`` and ``core_bandwidth`` apply as before.
    """

    up_to: int
    core_bandwidth: float
    bandwidth: float
    name: str

    __slots__ = _FIELDS = ("up_to", "core_bandwidth", "bandwidth", "name")

    def __init__(self, up_to: int, core_bandwidth: float, bandwidth: float, name: str = "") -> None:
        put = object.__setattr__
        put(self, "up_to", up_to)
        put(self, "core_bandwidth", core_bandwidth)
        put(self, "bandwidth", bandwidth)
        put(self, "name", name)

    def describe(self) -> str:
        """``L2 (up to 1 MiB per core)``: the level as an error or a comment names it."""
        size = f"up to {self.up_to:,} bytes per core"
        return f"{self.name} ({size})" if self.name else size


_NETWORK_KEYS = ("intra_node", "inter_node", "eager_limit", "wakeup", "topology")
_LINK_KEYS = ("latency", "bandwidth")
#: Keys of a network link table (``[network.intra_node]``, ``[network.inter_node]``).
_NETWORK_LINK_KEYS = ("latency", "bandwidth", "handshake", "ranges", "table")
_RANGE_KEYS = ("up_to", "latency", "bandwidth")
_CACHE_KEYS = ("levels",)
#: Rows ``[caches] levels`` may have: every action looks its level up among them.
MAX_CACHE_LEVELS = 16
_CACHE_LEVEL_KEYS = ("up_to", "core_bandwidth", "bandwidth", "name")
_PLACEMENT_KEYS = ("policy",)


class Machine(FrozenRecord):
    """A parallel machine: ``nodes`` × ``cores_per_node`` cores and a two-class network."""

    name: str
    nodes: int
    cores_per_node: int
    speed: float
    intra_node: Link
    inter_node: Link
    eager_limit: int | None
    #: Seconds a message adds when its receiver's node runs more processes than cores (0: none).
    wakeup: float
    collectives: dict[str, str]
    placement: str
    source: str | None
    #: flop/s of one core at speed 1 (roofline actions); None when the machine file does not say
    peak_flops: float | None
    #: bytes/s of one node's memory, shared by everything streaming on the node
    memory_bandwidth: float | None
    #: bytes/s one core can stream alone (default: the node's memory bandwidth)
    core_bandwidth: float | None
    #: faster rates for working sets that fit in a cache (``[caches] levels``, smallest first)
    caches: tuple[CacheLevel, ...]
    #: ``(up_to, bytes/s)``: how fast one core writes memory it touches for the first time, by the
    #: size of the allocation the memory comes from (the last ``up_to`` infinite); empty: not given
    first_touch: tuple[tuple[float, float], ...]
    #: seconds one library call costs beyond its work (``call_cost``); None when not given
    call_cost: float | None
    #: when fresh memory is new pages (``[allocator]``); None: always (every ``fresh`` byte costs)
    allocator: Allocator | None
    #: a factor on CPU work priced from its counts (flops, bytes, fresh, calls); 1 when not given.
    #: ``uml2perf calibrate`` writes it as 1 with the interval its catalogue of counted numpy
    #: lines spreads over: the prediction interval then says how far counting may be off.
    counting_factor: float
    #: seconds per element of the array operations an action names (``[operations]``), by name:
    #: ``((up_to, seconds), ...)`` by the bytes of the arrays (the last ``up_to`` infinite)
    operations: dict[str, tuple[tuple[float, float], ...]]
    devices: dict[str, Device]
    #: Seconds every rank spends per collective call beyond its messages (``[collectives] overhead``).
    collective_overhead: float
    #: Seconds per byte a reduction spends combining what it received (``[collectives] reduce_cost``;
    #: with ranges, the last one's: the cost of buffers too large for the ranges before).
    reduce_cost: float
    #: ``(up_to, seconds per byte)`` of ``reduce_cost`` given per range of the call's size, the last
    #: ``up_to`` infinite; empty when it is one number.
    reduce_ranges: tuple[tuple[float, float], ...]
    #: cores' worth of other programs running on every node (0: the model has the nodes to itself)
    background_load: float
    #: thread start and hand-off costs (``[threads]``); None: patterns without tags cost nothing extra
    threads: ThreadCosts | None
    #: the links and switches between nodes (``[network.topology]``); None: the two-class network
    topology: Topology | None

    _FIELDS = (
        "name",
        "nodes",
        "cores_per_node",
        "speed",
        "intra_node",
        "inter_node",
        "eager_limit",
        "wakeup",
        "collectives",
        "placement",
        "source",
        "peak_flops",
        "memory_bandwidth",
        "core_bandwidth",
        "caches",
        "first_touch",
        "call_cost",
        "allocator",
        "counting_factor",
        "operations",
        "devices",
        "collective_overhead",
        "reduce_cost",
        "reduce_ranges",
        "background_load",
        "threads",
        "topology",
    )

    def __init__(
        self,
        name: str = "default",
        nodes: int = 1,
        cores_per_node: int = 4,
        speed: float = 1.0,
        intra_node: Link = DEFAULT_INTRA_NODE,
        inter_node: Link = DEFAULT_INTER_NODE,
        eager_limit: int | None = None,
        wakeup: float = 0.0,
        collectives: dict[str, str] | None = None,
        placement: str = "block",
        source: str | None = None,
        peak_flops: float | None = None,
        memory_bandwidth: float | None = None,
        core_bandwidth: float | None = None,
        caches: tuple[CacheLevel, ...] = (),
        first_touch: tuple[tuple[float, float], ...] = (),
        call_cost: float | None = None,
        allocator: Allocator | None = None,
        counting_factor: float = 1.0,
        operations: dict[str, tuple[tuple[float, float], ...]] | None = None,
        devices: dict[str, Device] | None = None,
        collective_overhead: float = 0.0,
        reduce_cost: float = 0.0,
        reduce_ranges: tuple[tuple[float, float], ...] = (),
        background_load: float = 0.0,
        threads: ThreadCosts | None = None,
        topology: Topology | None = None,
    ) -> None:
        put = object.__setattr__
        put(self, "name", name)
        put(self, "nodes", nodes)
        put(self, "cores_per_node", cores_per_node)
        put(self, "speed", speed)
        put(self, "intra_node", intra_node)
        put(self, "inter_node", inter_node)
        put(self, "eager_limit", eager_limit)
        put(self, "wakeup", wakeup)
        put(self, "collectives", {} if collectives is None else collectives)
        put(self, "placement", placement)
        put(self, "source", source)
        put(self, "peak_flops", peak_flops)
        put(self, "memory_bandwidth", memory_bandwidth)
        put(self, "core_bandwidth", core_bandwidth)
        put(self, "caches", tuple(caches))
        put(self, "first_touch", tuple(first_touch))
        put(self, "call_cost", call_cost)
        put(self, "allocator", allocator)
        put(self, "counting_factor", counting_factor)
        put(self, "operations", {} if operations is None else dict(operations))
        put(self, "devices", {} if devices is None else devices)
        put(self, "collective_overhead", collective_overhead)
        put(self, "reduce_cost", reduce_ranges[-1][1] if reduce_ranges else reduce_cost)
        put(self, "reduce_ranges", tuple(reduce_ranges))
        put(self, "background_load", background_load)
        put(self, "threads", threads)
        put(self, "topology", topology)
        self.__post_init__()

    def __post_init__(self) -> None:
        where = self.source or f"machine '{self.name}'"
        _positive_int(where, "nodes", self.nodes)
        _positive_int(where, "cores_per_node", self.cores_per_node)
        _positive_number(where, "speed", self.speed)
        if self.placement not in PLACEMENTS:
            raise MachineError(
                f"{where}: placement must be one of {', '.join(PLACEMENTS)}, got {self.placement!r}"
            )

    # -- construction -------------------------------------------------------------

    @classmethod
    def default(cls) -> Machine:
        """A small built-in machine (1 node × 4 cores, shared-memory network), for quick runs."""
        return cls()

    @classmethod
    def bundled(cls) -> list[str]:
        """Names of the machine files shipped with the runtime (``gescher``, ``laptop``...)."""
        return sorted(p.stem for p in BUNDLED_DIR.glob("*.toml"))

    @classmethod
    def load(cls, name_or_path: str | Path, parse: TomlParser | None = None) -> Machine:
        """A machine file by path, or a bundled machine by name (``Machine.load("gescher")``).

        ``"default"`` is the built-in machine a run without ``--machine`` uses (and names 'default'),
        unless a file of that name is in the current directory.  ``parse`` is as in :meth:`from_toml`.
        """
        path = Path(name_or_path)
        if path.exists() or path.suffix or len(path.parts) > 1:
            return cls.from_toml(path, parse)
        candidate = BUNDLED_DIR / f"{name_or_path}.toml"
        if candidate.is_file():
            return cls.from_toml(candidate, parse)
        if str(name_or_path) == DEFAULT_NAME:
            return cls.default()
        raise MachineError(
            f"no machine file '{name_or_path}' and no bundled machine of that name",
            hint=f"bundled machines: {', '.join([DEFAULT_NAME, *cls.bundled()])}",
        )

    @classmethod
    def from_toml(cls, path: str | Path, parse: TomlParser | None = None) -> Machine:
        """Read and validate a machine file; errors name the file and the key.

        ``parse(text, what)`` turns the file's text into its table, as
        :func:`~uml2perf_runtime.output.structured.loads_toml` does (the default) and raising what
        it raises; ``uml2perf run`` passes one that keeps the tables of files it parsed before.
        Every check of the table below runs on whatever ``parse`` returns.
        """
        from ..output.files import InputFileError, read_text_input
        from ..output.structured import StructureError, loads_toml

        file = Path(path)
        try:
            data = (parse or loads_toml)(read_text_input(file, what="machine file"), "machine file")
        except InputFileError as exc:
            if not file.exists():
                raise MachineError(
                    f"machine file '{file}' not found",
                    hint="give the path of a TOML machine file, e.g. samples/machines/laptop.toml",
                ) from None
            raise MachineError(exc.message, hint=exc.hint) from None
        except FileNotFoundError:
            raise MachineError(
                f"machine file '{file}' not found",
                hint="give the path of a TOML machine file, e.g. samples/machines/laptop.toml",
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise MachineError(f"machine file '{file}' cannot be read: {exc}") from None
        except ValueError as exc:
            # tomllib.TOMLDecodeError is a ValueError; tomllib is imported only where a file is parsed
            toml = sys.modules.get("tomllib")
            if toml is None or not isinstance(exc, toml.TOMLDecodeError):
                raise
            raise MachineError(f"{file}: not valid TOML: {exc}") from None
        except StructureError as exc:
            raise MachineError(f"{file}: {exc.message}", hint=exc.hint) from None
        return cls.from_dict(data, source=str(file))

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "<machine>") -> Machine:
        """Validate machine parameters given as a dict shaped like the TOML file.

        Every problem of the file is reported at once (one error listing them all), each with
        its table and key, unknown keys with the allowed ones and the closest match.
        """
        data, uncertain = _split_intervals(source, data)
        _report_problems(source, data)
        _check_keys(source, "", data, _TOP_KEYS)
        for key in ("nodes", "cores_per_node"):
            if key not in data:
                raise MachineError(
                    f"{source}: missing key '{key}'", hint=f"add e.g. '{key} = 4' at the top of the file"
                )
        network = _table(source, "network", data.get("network", {}))
        _check_keys(source, "network", network, _NETWORK_KEYS)
        eager = network.get("eager_limit")
        if eager is not None:
            eager = _nonnegative_int(source, "[network] eager_limit", eager)
        placement = _table(source, "placement", data.get("placement", {}))
        _check_keys(source, "placement", placement, _PLACEMENT_KEYS)
        policy = placement.get("policy", "block")
        if policy not in PLACEMENTS:
            raise MachineError(
                f"{source}: [placement] policy must be one of "
                f"{', '.join(repr(p) for p in PLACEMENTS)}, got {policy!r}"
            )
        name = data.get("name", Path(source).stem if source != "<machine>" else "machine")
        if not isinstance(name, str) or not name:
            raise MachineError(f"{source}: name must be a non-empty string, got {name!r}")
        machine = cls(
            name=name,
            nodes=_positive_int(source, "nodes", data["nodes"]),
            cores_per_node=_positive_int(source, "cores_per_node", data["cores_per_node"]),
            speed=_positive_number(source, "speed", data.get("speed", 1.0)),
            intra_node=_network_link(
                source, "network.intra_node", network.get("intra_node"), DEFAULT_INTRA_NODE
            ),
            inter_node=_network_link(
                source, "network.inter_node", network.get("inter_node"), DEFAULT_INTER_NODE
            ),
            eager_limit=eager,
            wakeup=_wakeup(source, network.get("wakeup", 0.0)),
            collectives=_collectives(source, data.get("collectives", {})),
            placement=policy,
            source=source,
            peak_flops=_optional_positive(source, "peak_flops", data.get("peak_flops")),
            memory_bandwidth=_optional_positive(source, "memory_bandwidth", data.get("memory_bandwidth")),
            core_bandwidth=_optional_positive(source, "core_bandwidth", data.get("core_bandwidth")),
            caches=_caches(source, data.get("caches")),
            first_touch=_first_touch(source, data.get("first_touch")),
            call_cost=_optional_positive(source, "call_cost", data.get("call_cost")),
            allocator=_allocator(source, data.get("allocator")),
            counting_factor=_optional_positive(source, "counting_factor", data.get("counting_factor")) or 1.0,
            operations=_operations(source, data.get("operations")),
            devices=_devices(source, data.get("devices", {})),
            collective_overhead=_collective_cost(source, data.get("collectives", {}), "overhead"),
            reduce_cost=_collective_cost(source, data.get("collectives", {}), "reduce_cost"),
            reduce_ranges=_reduce_ranges(source, data.get("collectives", {})),
            background_load=_background_load(
                source, data.get("background_load", 0.0), data["cores_per_node"]
            ),
            threads=_threads(source, data.get("threads")),
            topology=_topology(source, network.get("topology"), data["nodes"]),
        )
        _variability(source, data.get("variability", {}))
        if uncertain:
            from .uncertain import UncertainMachine

            # not a field: equality, pickling and every use of the machine see the values alone
            found = UncertainMachine(data, tuple(uncertain), source, cls.from_dict)
            object.__setattr__(machine, "_uncertain", found)
        return machine

    def _reduce_cost_dict(self) -> Any:
        """``reduce_cost`` as the machine file writes it: one number, or its ranges."""
        if not self.reduce_ranges:
            return self.reduce_cost
        return [
            ({} if up_to == math.inf else {"up_to": int(up_to)}) | {"cost": cost}
            for up_to, cost in self.reduce_ranges
        ]

    @property
    def uncertain(self) -> Any:
        """The machine file's inputs given as intervals (an ``UncertainMachine``), or None.

        The machine itself holds the values; ``uncertain.draw(values)`` builds the machine of
        one sample (see :mod:`.uncertain`).  Copies made with ``_replace`` and pickled copies
        are plain machines at the values.
        """
        return getattr(self, "__dict__", {}).get("_uncertain")

    def with_nodes(self, nodes: int) -> Machine:
        """The same machine with a different node count (the ``--nodes`` option)."""
        where = self.source or self.name
        nodes = _positive_int(where, "nodes", nodes)
        if self.topology is not None and self.topology.node_count(nodes) < nodes:
            raise MachineError(
                f"{where}: --nodes {nodes}: the [network.topology] {self.topology.kind} "
                f"({self.topology.parameters}) connects only {self.topology.node_count(nodes)} nodes",
                hint="choose at most that many nodes, or give the machine file a larger topology",
            )
        return self._replace(nodes=nodes)

    def with_topology(self, topology: Topology | None) -> Machine:
        """The same machine with another topology, or None for the two-class network alone."""
        return self._replace(topology=topology)

    # -- queries ----------------------------------------------------------------------

    @property
    def cores(self) -> int:
        """Total number of cores."""
        return self.nodes * self.cores_per_node

    def link_levels(self) -> tuple[Link, Link] | None:
        """``(intra_node, inter_node)`` when :meth:`link` is the two-class rule, else None.

        The collective cost model then looks links up by level instead of per node pair; a
        subclass with its own ``link`` gets None.
        """
        if type(self).link is Machine.link:
            return (self.intra_node, self.inter_node)
        return None

    def crowded_wakeup(self, node_of: list[int]) -> list[float]:
        """Per node, ``wakeup`` where the placement ``node_of`` runs more processes than cores, else 0.

        An empty list when the machine has no wakeup or no node is crowded (then a message
        costs only its link).
        """
        if not self.wakeup or not node_of:
            return []
        counts = [0] * (max(node_of) + 1)
        for node in node_of:
            counts[node] += 1
        out = [self.wakeup if count > self.cores_per_node else 0.0 for count in counts]
        return out if any(out) else []

    def link(self, node_a: int, node_b: int) -> Link:
        """The link class between two nodes: intra-node when they are the same node."""
        return self.intra_node if node_a == node_b else self.inter_node

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description, shaped like the TOML file."""
        network: dict[str, Any] = {
            "intra_node": _link_dict(self.intra_node),
            "inter_node": _link_dict(self.inter_node),
        }
        if self.eager_limit is not None:
            network["eager_limit"] = self.eager_limit
        if self.wakeup:
            network["wakeup"] = self.wakeup
        if self.topology is not None:
            network["topology"] = self.topology.to_dict()
        out: dict[str, Any] = {
            "name": self.name,
            "nodes": self.nodes,
            "cores_per_node": self.cores_per_node,
            "speed": self.speed,
            "network": network,
            "collectives": dict(sorted(self.collectives.items()))
            | ({"overhead": self.collective_overhead} if self.collective_overhead else {})
            | ({"reduce_cost": self._reduce_cost_dict()} if self.reduce_cost or self.reduce_ranges else {}),
            "placement": {"policy": self.placement},
        }
        for key in ("peak_flops", "memory_bandwidth", "core_bandwidth"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.caches:
            out["caches"] = {
                "levels": [
                    ({"name": level.name} if level.name else {})
                    | {
                        "up_to": level.up_to,
                        "core_bandwidth": level.core_bandwidth,
                        "bandwidth": level.bandwidth,
                    }
                    for level in self.caches
                ]
            }
        if self.first_touch:
            out["first_touch"] = _first_touch_dict(self.first_touch)
        if self.call_cost is not None:
            out["call_cost"] = self.call_cost
        if self.counting_factor != 1.0:
            out["counting_factor"] = self.counting_factor
        if self.operations:
            from .array_operations import operations_dict

            out["operations"] = operations_dict(self.operations)
        if self.allocator is not None:
            out["allocator"] = {"reuse_below": self.allocator.reuse_below}
            if math.isfinite(self.allocator.mapped_from):
                out["allocator"]["mapped_from"] = self.allocator.mapped_from
        if self.background_load:
            out["background_load"] = self.background_load
        if self.threads is not None:
            out["threads"] = {key: getattr(self.threads, key) for key in ThreadCosts._FIELDS}
        if self.devices:
            out["devices"] = {
                name: {
                    "count": d.count,
                    "peak_flops": d.peak_flops,
                    "memory_bandwidth": d.memory_bandwidth,
                    "link": {"latency": d.link.latency, "bandwidth": d.link.bandwidth},
                }
                for name, d in sorted(self.devices.items())
            }
        return out


#: Keys that count things: the machine's shape, never an interval.
_COUNT_KEYS = ("nodes", "cores_per_node", "count")
#: The key naming each column of a measured link ``table`` row (for its unit).
_TABLE_COLUMNS = ("size", "seconds")


def _split_intervals(source: str, data: Any) -> tuple[Any, list[tuple[Any, Any]]]:
    """The file with every ``{ value, low, high }`` replaced by its value, and the intervals by key path.

    Each number of an interval is read like the key's plain numbers (units included); a count
    (nodes, cores) cannot be an interval.  Problems name the key.
    """
    if not isinstance(data, dict):
        return data, []
    from .uncertain import path_text, split_intervals

    def convert(path: tuple[Any, ...], raw: Any) -> float:
        names = [part for part in path if isinstance(part, str)]
        key = names[-1] if names else ""
        if isinstance(path[-1], int) and len(names) and names[-1] == "table":
            key = _TABLE_COLUMNS[min(path[-1], 1)]
        where = path_text(path)
        if key in _COUNT_KEYS:
            raise MachineError(
                f"{source}: {where} is a count and cannot be an interval",
                hint="give the count as a whole number; intervals are for measured values",
            )
        value = _with_unit(source, f"{where} {key}", raw)
        if not _is_number(value):
            raise MachineError(
                f"{source}: {where}: the numbers of an interval must be numbers, got {raw!r}",
                hint="e.g. latency = { value = 7e-7, low = 6.5e-7, high = 9e-7 }",
            )
        return value  # type: ignore[no-any-return]

    try:
        return split_intervals(data, convert)
    except ValueError as exc:
        raise MachineError(
            f"{source}: an interval {{ value, low, high }}: {exc}",
            hint="write { value = V, low = L, high = H } with L <= V <= H (L, H: 5th and 95th percentiles)",
        ) from None


def _report_problems(source: str, data: Any) -> None:
    """Check every part of a machine file on its own; raise one error naming all the problems.

    One problem is raised as it is (message and hint); several become one error that lists each
    message, so a person fixes the whole file in one round.  A file without problems passes
    through and is then built by :meth:`Machine.from_dict` (whose checks are the same functions).
    """
    if not isinstance(data, dict):
        return
    found: list[MachineError] = []

    def check(fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except MachineError as exc:
            found.append(exc)

    check(_check_keys, source, "", data, _TOP_KEYS)
    for key in ("nodes", "cores_per_node"):
        if key not in data:
            found.append(
                MachineError(
                    f"{source}: missing key '{key}'", hint=f"add e.g. '{key} = 4' at the top of the file"
                )
            )
        else:
            check(_positive_int, source, key, data[key])
    network = data.get("network", {})
    if isinstance(network, dict):
        check(_check_keys, source, "network", network, _NETWORK_KEYS)
        if network.get("eager_limit") is not None:
            check(_nonnegative_int, source, "[network] eager_limit", network["eager_limit"])
        check(_wakeup, source, network.get("wakeup", 0.0))
        check(_network_link, source, "network.intra_node", network.get("intra_node"), DEFAULT_INTRA_NODE)
        check(_network_link, source, "network.inter_node", network.get("inter_node"), DEFAULT_INTER_NODE)
        if network.get("topology") is not None and isinstance(data.get("nodes"), int):
            check(_topology, source, network["topology"], data["nodes"])
    else:
        check(_table, source, "network", network)
    if "speed" in data:
        check(_positive_number, source, "speed", data["speed"])
    collectives = data.get("collectives", {})
    check(_collectives, source, collectives)
    if isinstance(collectives, dict):
        for key in COLLECTIVE_COSTS:
            check(_collective_cost, source, collectives, key)
        check(_reduce_ranges, source, collectives)
    for key in ("peak_flops", "memory_bandwidth", "core_bandwidth"):
        check(_optional_positive, source, key, data.get(key))
    check(_caches, source, data.get("caches"))
    check(_first_touch, source, data.get("first_touch"))
    check(_optional_positive, source, "call_cost", data.get("call_cost"))
    check(_allocator, source, data.get("allocator"))
    check(_optional_positive, source, "counting_factor", data.get("counting_factor"))
    check(_operations, source, data.get("operations"))
    check(_devices, source, data.get("devices", {}))
    found = _distinct(found)
    if len(found) == 1:
        raise found[0]
    if found:
        prefix = f"{source}: "
        lines = [
            f"  - {e.message.removeprefix(prefix)}" + (f"\n      ({e.hint})" if e.hint else "") for e in found
        ]
        raise MachineError(
            f"{source}: {len(found)} problems:\n" + "\n".join(lines),
            hint="fix them all, then load the file again",
        )


def _distinct(errors: list[MachineError]) -> list[MachineError]:
    seen: set[str] = set()
    out = []
    for e in errors:
        if e.message not in seen:
            seen.add(e.message)
            out.append(e)
    return out


def _link_dict(link: Link) -> dict[str, Any]:
    """A link shaped like its machine-file table (pieces as ``ranges``, whatever they came from)."""

    def rate(bandwidth: float) -> float | str:
        return "inf" if bandwidth == math.inf else bandwidth  # JSON has no infinity

    if link.pieces is None:
        out: dict[str, Any] = {"latency": link.latency, "bandwidth": rate(link.bandwidth)}
    else:
        out = {
            "ranges": [
                ({} if up_to == math.inf else {"up_to": up_to})
                | {"latency": alpha, "bandwidth": rate(math.inf if beta == 0.0 else 1.0 / beta)}
                for up_to, alpha, beta in link.pieces
            ]
        }
    if link.handshake:
        out["handshake"] = link.handshake
    return out


# -- validation helpers ------------------------------------------------------------------


def _optional_positive(source: str, key: str, value: Any) -> float | None:
    """A positive, finite number given in a machine file (a value with units is accepted), or None."""
    if value is None:
        return None
    return _positive_number(source, key, value)


def _background_load(source: str, value: Any, cores: Any) -> float:
    """Other programs' work on each node, in cores (0 up to the node's cores)."""
    if not _is_number(value) or not (0.0 <= float(value) < math.inf):
        raise MachineError(
            f"{source}: background_load must be a number of cores (0 or more), got {value!r}",
            hint="e.g. background_load = 0.5 when other work keeps half a core busy",
        )
    if isinstance(cores, int) and float(value) > cores:
        raise MachineError(f"{source}: background_load {value} is more than the node's {cores} cores")
    return float(value)


def _threads(source: str, value: Any) -> ThreadCosts | None:
    """``[threads]``: start, handoff, overhead, wakeup in seconds (0 or more; each optional)."""
    if value is None:
        return None
    table = _table(source, "threads", value)
    _check_keys(source, "threads", table, ThreadCosts._FIELDS)
    seconds = {}
    for key, given in table.items():
        if isinstance(given, str):  # a time with its unit, "40us"
            from .units import quantity

            try:
                given = quantity(given, "time")
            except ValueError as exc:
                raise MachineError(f"{source}: [threads] {key}: {exc}") from None
        if not _is_number(given) or not (0.0 <= float(given) < math.inf):
            raise MachineError(
                f"{source}: [threads] {key} must be seconds (0 or more), got {given!r}",
                hint="e.g. start = 40e-6 (a thread start), handoff = 6e-6 (one item handed on)",
            )
        seconds[key] = float(given)
    return ThreadCosts(**seconds)


def _allocator(source: str, value: Any) -> Allocator | None:
    """``[allocator]``: ``reuse_below`` (a factor, 0 or more) and ``mapped_from`` (bytes, optional)."""
    if value is None:
        return None
    table = _table(source, "allocator", value)
    _check_keys(source, "allocator", table, Allocator._FIELDS)
    hint = 'e.g. reuse_below = 2, mapped_from = "32 MiB" (what uml2perf calibrate measures with glibc)'
    reuse = table.get("reuse_below", 0.0)
    if not _is_number(reuse) or not (0.0 <= float(reuse) < math.inf):
        raise MachineError(
            f"{source}: [allocator] reuse_below must be a number (0 or more), got {reuse!r}", hint=hint
        )
    mapped: Any = math.inf
    if "mapped_from" in table:
        mapped = _with_unit(source, "[allocator] mapped_from", table["mapped_from"])
        if not _is_number(mapped) or not (0.0 < float(mapped) < math.inf):
            raise MachineError(
                f"{source}: [allocator] mapped_from must be a number of bytes (more than 0), "
                f"got {table['mapped_from']!r}",
                hint=hint,
            )
    return Allocator(float(reuse), float(mapped))


def _caches(source: str, value: Any) -> tuple[CacheLevel, ...]:
    """``[caches] levels = [{ up_to, core_bandwidth, bandwidth, name }, ...]``, smallest first."""
    if value is None:
        return ()
    table = _table(source, "caches", value)
    _check_keys(source, "caches", table, _CACHE_KEYS)
    rows = table.get("levels", [])
    hint = (
        'e.g. levels = [{ up_to = "1 MiB", core_bandwidth = 9e10, bandwidth = 1.8e11 }]: '
        "bytes per core, then bytes/s of one core alone and of the whole node"
    )
    if not isinstance(rows, list):
        raise MachineError(f"{source}: [caches] levels must be a list of tables, got {rows!r}", hint=hint)
    if len(rows) > MAX_CACHE_LEVELS:
        raise MachineError(
            f"{source}: [caches] has {len(rows)} levels, more than {MAX_CACHE_LEVELS}",
            hint="give one row per cache level (or per measured working-set size), smallest first",
        )
    levels: list[CacheLevel] = []
    for index, row in enumerate(rows, start=1):
        where = f"caches.levels[{index}]"
        row = _table(source, where, row)
        _check_keys(source, where, row, _CACHE_LEVEL_KEYS)
        for key in ("up_to", "core_bandwidth", "bandwidth"):
            if key not in row:
                raise MachineError(f"{source}: [{where}] needs '{key}'", hint=hint)
        up_to = _positive_int(
            source, f"[{where}] up_to", _with_unit(source, f"[{where}] up_to", row["up_to"])
        )
        if levels and up_to <= levels[-1].up_to:
            raise MachineError(
                f"{source}: [{where}] up_to {up_to:,} is not above the level before ({levels[-1].up_to:,})",
                hint="list the levels smallest first",
            )
        name = row.get("name", "")
        if not isinstance(name, str):
            raise MachineError(
                f"{source}: [{where}] name must be a string, got {name!r}", hint='e.g. name = "L2"'
            )
        levels.append(
            CacheLevel(
                up_to=up_to,
                core_bandwidth=_positive_number(source, f"[{where}] core_bandwidth", row["core_bandwidth"]),
                bandwidth=_positive_number(source, f"[{where}] bandwidth", row["bandwidth"]),
                name=name,
            )
        )
    return tuple(levels)


def _devices(source: str, value: Any) -> dict[str, Device]:
    """``[devices.NAME]`` tables: count, peak_flops, memory_bandwidth, link = {latency, bandwidth}."""
    table = _table(source, "devices", value)
    _within(source, "device_kinds", len(table), "the number of [devices.*] tables")
    found: dict[str, Device] = {}
    for name, entry in table.items():
        where = f"devices.{name}"
        if not isinstance(name, str) or not name.isidentifier() or name in ("cpu", "auto"):
            raise MachineError(
                f"{source}: device name {name!r} must be a plain name other than cpu and auto",
                hint="e.g. [devices.gpu]",
            )
        entry = _table(source, where, entry)
        _check_keys(source, where, entry, _DEVICE_KEYS)
        for key in ("count", "peak_flops", "memory_bandwidth", "link"):
            if key not in entry:
                raise MachineError(
                    f"{source}: [{where}] needs '{key}'",
                    hint="count, peak_flops (flop/s), memory_bandwidth (bytes/s) and "
                    "link = { latency = S, bandwidth = B }",
                )
        count = _positive_int(source, f"[{where}] count", entry["count"])
        _within(source, "devices", count, f"[{where}] count")
        found[name] = Device(
            name=name,
            count=count,
            peak_flops=_positive_number(source, f"[{where}] peak_flops", entry["peak_flops"]),
            memory_bandwidth=_positive_number(
                source, f"[{where}] memory_bandwidth", entry["memory_bandwidth"]
            ),
            link=_link(source, f"{where}.link", entry["link"], DEFAULT_INTRA_NODE),
        )
    return found


def _check_keys(source: str, table: str, data: dict[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(data) - set(allowed), key=str)
    if unknown:
        import difflib

        where = f"[{table}]" if table else "the top level"
        names = ", ".join(repr(k) for k in unknown)
        guesses = {
            k: close[0]
            for k in unknown
            if (close := difflib.get_close_matches(str(k), allowed, n=1, cutoff=0.6))
        }
        if len(unknown) == 1:
            meant = ", ".join(f"'{guess}'" for guess in guesses.values())
        else:
            meant = ", ".join(f"'{guess}' for '{k}'" for k, guess in guesses.items())
        raise MachineError(
            f"{source}: unknown key{'s' if len(unknown) > 1 else ''} {names} in {where}"
            + (f" (did you mean {meant}?)" if meant else ""),
            hint=f"allowed keys there: {', '.join(allowed)}",
        )


def _table(source: str, key: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MachineError(f"{source}: '{key}' must be a table ([{key}]), got {value!r}")
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _within(source: str, limit: str, value: int, what: str) -> None:
    """A machine file's request checked against one of the limits (the same message as nodes, cores)."""
    from ..engine.limits import current

    bound = getattr(current(), limit)
    if value > bound:
        raise MachineError(
            f"{source}: {what} is {value:,}, more than the limit of {bound:,} ({limit})",
            hint=f"raise it with --limit {limit}=N if the machine really is that large",
        )


def _positive_int(source: str, key: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise MachineError(f"{source}: {key} must be a whole number of at least 1, got {value!r}")
    limit = {"nodes": "nodes", "cores_per_node": "cores"}.get(key)
    if limit is not None:
        from ..engine.limits import current

        bound = getattr(current(), limit)
        if value > bound:
            raise MachineError(
                f"{source}: {key} is {value:,}, more than the limit of {bound:,} ({limit})",
                hint=f"raise it with --limit {limit}=N if the machine really is that large",
            )
    return value


#: Which kind of quantity a key holds, for values written with units (see :mod:`.units`).
_UNIT_KINDS = {
    "latency": "time",
    "bandwidth": "bandwidth",
    "memory_bandwidth": "bandwidth",
    "core_bandwidth": "bandwidth",
    "peak_flops": "flops",
    "first_touch": "bandwidth",
    "call_cost": "time",
    "eager_limit": "bytes",
    "overhead": "time",
    "handshake": "time",
    "wakeup": "time",
    "up_to": "bytes",
    "mapped_from": "bytes",
    "size": "bytes",
    "seconds": "time",
}


def _with_unit(source: str, key: str, value: Any) -> Any:
    """A value given with a unit ("1us", "10 Gbit/s") in the key's base unit; other values as they are."""
    if not isinstance(value, str):
        return value
    from .units import quantity

    kind = _UNIT_KINDS.get(key.split()[-1].split(".")[-1].strip("[]"))
    if kind is None:
        return value
    try:
        result = quantity(value, kind)
    except ValueError as exc:
        raise MachineError(f"{source}: {key}: {exc}") from None
    if kind == "bytes" and float(result).is_integer():
        return int(result)
    return result


def _nonnegative_int(source: str, key: str, value: Any) -> int:
    value = _with_unit(source, key, value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise MachineError(f"{source}: {key} must be a whole number of bytes (0 or more), got {value!r}")
    return value


def _positive_number(source: str, key: str, value: Any) -> float:
    value = _with_unit(source, key, value)
    if not _is_number(value) or not (0.0 < float(value) < math.inf):
        raise MachineError(f"{source}: {key} must be a positive number, got {value!r}")
    return float(value)


def _link(source: str, table: str, value: Any, default: Link) -> Link:
    if value is None:
        return default
    data = _table(source, table, value)
    _check_keys(source, table, data, _LINK_KEYS)
    latency = _with_unit(source, f"[{table}] latency", data.get("latency", default.latency))
    if not _is_number(latency) or not (0.0 <= float(latency) < math.inf):
        raise MachineError(
            f"{source}: [{table}] latency must be a number of seconds (0 or more), got {latency!r}"
        )
    bandwidth = _with_unit(source, f"[{table}] bandwidth", data.get("bandwidth", default.bandwidth))
    if not _is_number(bandwidth) or not (0.0 < float(bandwidth) <= math.inf):
        raise MachineError(
            f"{source}: [{table}] bandwidth must be a positive number of bytes per second, got {bandwidth!r}"
        )
    return Link(latency=float(latency), bandwidth=float(bandwidth))


def _topology(source: str, value: Any, nodes: Any) -> Topology | None:
    """``[network.topology]``: the links between nodes (None when the file has none)."""
    if value is None:
        return None
    from .topology import parse_topology

    return parse_topology(source, value, int(nodes), _with_unit, _check_keys)


def _variability(source: str, value: Any) -> None:
    """``[variability] run_to_run``: a factor on the whole run, 1 at its value (only its interval counts).

    The prediction is the typical launch; the factor's interval (see ``uml2perf calibrate``) is
    drawn into the prediction interval by the caller, never into a simulated machine.
    """
    table = _table(source, "variability", value)
    _check_keys(source, "variability", table, ("run_to_run",))
    if "run_to_run" in table and (not _is_number(table["run_to_run"]) or table["run_to_run"] != 1):
        raise MachineError(
            f"{source}: [variability] run_to_run must be 1 at its value, got {table['run_to_run']!r}",
            hint="write run_to_run = { value = 1, low = 0.9, high = 1.3 }: the run's time varies around "
            "the prediction by low..high (5th..95th percentiles)",
        )


def _operations(source: str, value: Any) -> dict[str, tuple[tuple[float, float], ...]]:
    """``[operations]``: seconds per element of named array operations (see :mod:`.array_operations`)."""
    from .array_operations import parse_operations

    return parse_operations(source, value, _sized_ranges, _non_negative_seconds)


def _non_negative_seconds(source: str, key: str, value: Any, hint: str | None = None) -> float:
    """Seconds, 0 or more (an operation measured no slower than its bytes costs nothing more)."""
    value = _with_unit(source, key, value)
    if not _is_number(value) or not (0.0 <= float(value) < math.inf):
        raise MachineError(
            f"{source}: {key} must be a number of seconds (0 or more), got {value!r}", hint=hint
        )
    return float(value)


def _wakeup(source: str, value: Any) -> float:
    """``[network] wakeup``: seconds of a message to a process whose node runs more processes than cores."""
    return _non_negative_seconds(
        source,
        "[network] wakeup",
        value,
        hint='e.g. wakeup = "4 us" (what uml2perf calibrate measures with two ranks per core)',
    )


def _network_link(source: str, table: str, value: Any, default: Link) -> Link:
    """A network link: one line, or ``ranges``/``table`` pieces, and an optional ``handshake``."""
    if value is None:
        return default
    data = _table(source, table, value)
    _check_keys(source, table, data, _NETWORK_LINK_KEYS)
    plain = {k: v for k, v in data.items() if k in _LINK_KEYS}
    handshake = 0.0
    if "handshake" in data:
        handshake = _with_unit(source, f"[{table}] handshake", data["handshake"])
        if not _is_number(handshake) or not (0.0 <= float(handshake) < math.inf):
            raise MachineError(
                f"{source}: [{table}] handshake must be a number of seconds (0 or more), got {handshake!r}",
                hint='e.g. handshake = "1.5 us" (about one round trip of a small message)',
            )
    if "ranges" in data and "table" in data:
        raise MachineError(
            f"{source}: [{table}] has both 'ranges' and 'table'",
            hint="give the link's costs one way: latency/bandwidth per size range, or measured times",
        )
    if "table" in data:
        if plain:
            raise MachineError(
                f"{source}: [{table}] has a 'table' and {' and '.join(sorted(plain))}",
                hint="a measured table gives the time of every size: remove latency and bandwidth",
            )
        pieces = _table_pieces(source, table, data["table"])
    elif "ranges" in data:
        pieces = _range_pieces(source, table, data["ranges"], data, default)
    else:
        line = _link(source, table, plain, default)
        return Link(line.latency, line.bandwidth, float(handshake)) if handshake else line
    first, last = pieces[0], pieces[-1]
    bandwidth = math.inf if last[2] == 0.0 else 1.0 / last[2]
    return Link(first[1], bandwidth, float(handshake), pieces)


def _range_pieces(
    source: str, table: str, value: Any, data: dict[str, Any], default: Link
) -> tuple[tuple[float, float, float], ...]:
    """``ranges = [{up_to, latency, bandwidth}, ...]``: one line per size range, in order."""
    where = f"[{table}] ranges"
    if not isinstance(value, list) or not value:
        raise MachineError(
            f"{source}: {where} must be a non-empty list of tables, got {value!r}",
            hint='e.g. [[network.intra_node.ranges]] up_to = "4 KiB", latency = "0.6 us", '
            'bandwidth = "2 GB/s"',
        )
    pieces: list[tuple[float, float, float]] = []
    previous = -math.inf
    for index, entry in enumerate(value):
        name = f"{table}.ranges[{index + 1}]"
        at = f"[{name}]"
        entry = _table(source, name, entry)
        _check_keys(source, name, entry, _RANGE_KEYS)
        for key in ("latency", "bandwidth"):
            if key not in entry:
                raise MachineError(
                    f"{source}: {at} needs '{key}'", hint="each range has latency and bandwidth"
                )
        line = _link(source, name, {"latency": entry["latency"], "bandwidth": entry["bandwidth"]}, default)
        if "up_to" in entry:
            up_to = _with_unit(source, f"{at} up_to", entry["up_to"])
            if not _is_number(up_to) or not (0.0 <= float(up_to) < math.inf):
                raise MachineError(
                    f"{source}: {at} up_to must be a number of bytes (0 or more), got {up_to!r}"
                )
            up_to = float(up_to)
        elif index < len(value) - 1:
            raise MachineError(
                f"{source}: {at} has no up_to, but ranges follow it",
                hint="only the last range may leave up_to out (it then covers every larger size)",
            )
        else:
            up_to = math.inf
        if up_to <= previous:
            raise MachineError(
                f"{source}: {at} up_to = {up_to:g} does not exceed the range before it ({previous:g})",
                hint="list the ranges by increasing up_to",
            )
        previous = up_to
        beta = 0.0 if line.bandwidth == math.inf else 1.0 / line.bandwidth
        pieces.append((up_to, line.latency, beta))
    if previous < math.inf:
        if "latency" not in data or "bandwidth" not in data:
            raise MachineError(
                f"{source}: {where} end at {previous:g} bytes, and [{table}] says nothing of larger messages",
                hint=f"leave up_to out of the last range, or set latency and bandwidth of [{table}] "
                "for the messages above it",
            )
        line = _link(source, table, {"latency": data["latency"], "bandwidth": data["bandwidth"]}, default)
        pieces.append((math.inf, line.latency, 0.0 if line.bandwidth == math.inf else 1.0 / line.bandwidth))
    return tuple(pieces)


def _table_pieces(source: str, table: str, value: Any) -> tuple[tuple[float, float, float], ...]:
    """``table = [[size, seconds], ...]``: piecewise-linear in the size between measured points.

    Below the first size the first time applies; above the last size the last segment goes on.
    """
    where = f"[{table}] table"
    hint = 'e.g. table = [[8, "0.6 us"], [4096, "2.5 us"], [1048576, "95 us"]] (bytes, seconds)'
    if not isinstance(value, list) or len(value) < 2:
        raise MachineError(
            f"{source}: {where} needs at least two [size, seconds] points, got {value!r}", hint=hint
        )
    points: list[tuple[float, float]] = []
    for index, row in enumerate(value):
        at = f"{where}[{index + 1}]"
        if not isinstance(row, list) or len(row) != 2:
            raise MachineError(f"{source}: {at} must be a pair [size, seconds], got {row!r}", hint=hint)
        size = _with_unit(source, f"{at} size", row[0])
        seconds = _with_unit(source, f"{at} seconds", row[1])
        if not _is_number(size) or not (0.0 <= float(size) < math.inf):
            raise MachineError(f"{source}: {at} size must be a number of bytes, got {row[0]!r}", hint=hint)
        if not _is_number(seconds) or not (0.0 <= float(seconds) < math.inf):
            raise MachineError(f"{source}: {at} time must be a number of seconds, got {row[1]!r}", hint=hint)
        if points and float(size) <= points[-1][0]:
            raise MachineError(
                f"{source}: {at} size {float(size):g} does not exceed the size before it",
                hint="list the points by increasing size",
            )
        if points and float(size) - points[-1][0] < 1.0:
            # a step of less than a byte measures nothing, and its slope overflows or cancels
            raise MachineError(
                f"{source}: {at} size {float(size)!r} is less than one byte above the size before it "
                f"({points[-1][0]!r})",
                hint="measured sizes are whole bytes: list points at least one byte apart",
            )
        points.append((float(size), float(seconds)))
    pieces = [(points[0][0], points[0][1], 0.0)]
    for (n0, t0), (n1, t1) in zip(points, points[1:], strict=False):
        beta = (t1 - t0) / (n1 - n0)
        pieces.append((n1, t0 - n0 * beta, beta))
    last = pieces[-1]
    if last[2] < 0:
        raise MachineError(
            f"{source}: {where} falls between its last two sizes, so larger messages would get faster",
            hint="end the table with a size whose time is at least the one before it",
        )
    pieces[-1] = (math.inf, last[1], last[2])
    return tuple(pieces)


#: Numeric keys of ``[collectives]`` beside the algorithm choices.
COLLECTIVE_COSTS = ("overhead", "reduce_cost")


def _collective_cost(source: str, value: Any, key: str) -> float:
    data = _table(source, "collectives", value)
    if key not in data:
        return 0.0
    number = data[key]
    if key == "reduce_cost" and isinstance(number, list):
        return 0.0  # ranges: read by _reduce_ranges, whose last range the machine takes as reduce_cost
    if not _is_number(number) or not math.isfinite(float(number)) or float(number) < 0:
        raise MachineError(
            f"{source}: [collectives] {key} must be a number of at least 0 (seconds"
            f"{' per byte' if key == 'reduce_cost' else ''}), got {number!r}",
            hint=REDUCE_RANGES_HINT if key == "reduce_cost" else None,
        )
    return float(number)


REDUCE_RANGES_HINT = (
    "reduce_cost = 2.5e-10, or per range of the reduced buffer's size: "
    'reduce_cost = [{ up_to = "8 MiB", cost = 6e-11 }, { cost = 2.5e-10 }]'
)


def _reduce_ranges(source: str, value: Any) -> tuple[tuple[float, float], ...]:
    """``[collectives] reduce_cost = [{ up_to, cost }, ..., { cost }]``: seconds per byte by the call's size.

    Why ranges: a reduction combines what it received with its own buffer, and a program that
    reduces the same buffers in a loop finds them in a cache while they fit there, from memory
    beyond; the two cost several times apart.  Sizes are the call's ``size`` (bytes reduced),
    ranges smallest first, the last without ``up_to``.
    """
    data = _table(source, "collectives", value)
    rows = data.get("reduce_cost")
    if not isinstance(rows, list):
        return ()
    ranges = _sized_ranges(source, "[collectives] reduce_cost", rows, "cost", REDUCE_RANGES_HINT)
    for index, (_, cost) in enumerate(ranges, start=1):
        if not math.isfinite(cost) or cost < 0:
            raise MachineError(
                f"{source}: [collectives] reduce_cost[{index}] cost must be seconds per byte (0 or more), "
                f"got {cost!r}"
            )
    return ranges


FIRST_TOUCH_HINT = (
    "first_touch = 2e9 (bytes/s), or per range of the allocation's size: "
    'first_touch = [{ up_to = "4 MiB", bandwidth = 2e9 }, { bandwidth = 1.5e10 }]'
)


def _first_touch(source: str, value: Any) -> tuple[tuple[float, float], ...]:
    """``first_touch``: bytes/s, one number or ranges ``[{ up_to, bandwidth }, ..., { bandwidth }]``.

    Why ranges: how fast fresh memory is mapped in depends on the pages the system backs an
    allocation with, and that depends on the allocation's size (large ones may get huge pages,
    which cost a fraction of small ones per byte).  Sizes are an action's ``allocation`` tag.
    """
    if value is None:
        return ()
    if not isinstance(value, list):
        return ((math.inf, _positive_number(source, "first_touch", value)),)
    ranges = _sized_ranges(source, "first_touch", value, "bandwidth", FIRST_TOUCH_HINT)
    for index, (_, rate) in enumerate(ranges, start=1):
        _positive_number(source, f"first_touch[{index}] bandwidth", rate)
    return ranges


def _first_touch_dict(ranges: tuple[tuple[float, float], ...]) -> Any:
    """``first_touch`` as a machine file writes it: one number, or its ranges."""
    if len(ranges) == 1:
        return ranges[0][1]
    return [
        ({} if up_to == math.inf else {"up_to": int(up_to)}) | {"bandwidth": rate} for up_to, rate in ranges
    ]


def _sized_ranges(
    source: str, where: str, rows: list[Any], column: str, hint: str
) -> tuple[tuple[float, float], ...]:
    """Rows ``[{ up_to, COLUMN }, ..., { COLUMN }]`` as ``(up_to, number)``, the last up to infinity.

    Only the shape is checked here (tables, keys, sizes rising, numbers); what a valid number
    is belongs to the key (the caller checks it).
    """
    if not rows or len(rows) > MAX_CACHE_LEVELS + 1:
        raise MachineError(
            f"{source}: {where} needs 1 to {MAX_CACHE_LEVELS + 1} ranges, got {len(rows)}", hint=hint
        )
    dotted = where.replace("[", "").replace("] ", ".")
    ranges: list[tuple[float, float]] = []
    for index, row in enumerate(rows, start=1):
        at = f"{where}[{index}]"
        if not isinstance(row, dict):
            raise MachineError(f"{source}: {at} must be a table, got {row!r}", hint=hint)
        _check_keys(source, f"{dotted}[{index}]", row, ("up_to", column))
        last = index == len(rows)
        if column not in row:
            raise MachineError(f"{source}: {at} needs '{column}'", hint=hint)
        if last != ("up_to" not in row):
            raise MachineError(
                f"{source}: {at} "
                + (
                    "must not have 'up_to': the last range takes every larger size"
                    if last
                    else "needs 'up_to' (bytes): only the last range has none"
                ),
                hint=hint,
            )
        up_to = (
            math.inf
            if last
            else float(_positive_int(source, f"{at} up_to", _with_unit(source, f"{at} up_to", row["up_to"])))
        )
        if ranges and up_to <= ranges[-1][0]:
            raise MachineError(
                f"{source}: {at} up_to is not above the range before", hint="list the ranges smallest first"
            )
        number = _with_unit(source, f"{at} {column}", row[column])
        if not _is_number(number):
            raise MachineError(f"{source}: {at} {column} must be a number, got {row[column]!r}", hint=hint)
        ranges.append((up_to, float(number)))
    return tuple(ranges)


def _collectives(source: str, value: Any) -> dict[str, str]:
    data = _table(source, "collectives", value)
    _check_keys(source, "collectives", data, COLLECTIVE_OPERATIONS + COLLECTIVE_COSTS)
    choices: dict[str, str] = {}
    for operation, algorithm in sorted(data.items()):
        if operation in COLLECTIVE_COSTS:
            continue
        if not isinstance(algorithm, str) or not algorithm:
            raise MachineError(
                f"{source}: [collectives] {operation} must name an algorithm (a string), got {algorithm!r}"
            )
        known = _known_algorithms(operation)
        if known and algorithm not in known:
            raise MachineError(
                f"{source}: [collectives] {operation} = {algorithm!r} is not an algorithm of {operation}",
                hint=f"choose one of: {', '.join(known)}",
            )
        choices[operation] = algorithm
    return choices


def _known_algorithms(operation: str) -> tuple[str, ...]:
    """Algorithm names the network model implements for ``operation`` (plus ``auto``)."""
    try:
        from .network import ALGORITHMS
    except ImportError:  # pragma: no cover - the network model ships with the runtime
        return ()
    names = ALGORITHMS.get(operation)
    return ("auto", *names) if names else ()


__all__ = [
    "Machine",
    "Link",
    "PLACEMENTS",
    "DEFAULT_EAGER_LIMIT",
    "COLLECTIVE_OPERATIONS",
    "DEFAULT_INTRA_NODE",
    "DEFAULT_INTER_NODE",
    "ThreadCosts",
    "CacheLevel",
]
