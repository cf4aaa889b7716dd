"""Network topologies of a machine file: which links a message between two nodes crosses.

``[network.topology]`` describes the network between nodes as links and switches, in the forms
SimGrid writes its cluster zones in (``topo_parameters``):

* ``star``: every node has its own link to one switch (SimGrid's flat cluster);
* ``fat_tree``: ``"h;m_1,...,m_h;w_1,...,w_h;p_1,...,p_h"`` -- ``h`` levels of switches,
  ``m_l`` children per switch of level ``l``, ``w_l`` parents per element of level ``l - 1``,
  ``p_l`` parallel links between a child and a parent; routes go up by D-mod-k (the parent and
  the parallel link are picked from the destination's number) to the first common ancestor, then
  down (the parallel links as SimGrid picks them);
* ``torus``: ``"x,y,z"`` (any number of dimensions) -- every node has one link to its next
  neighbour in each dimension; routes follow dimension order, one hop at a time, the short way
  round;
* ``dragonfly``: ``"G,g;C,c;R,r;N"`` -- ``G`` groups, ``C`` chassis per group, ``R`` routers per
  chassis, ``N`` nodes per router (``g``, ``c``, ``r`` parallel links); routers of a chassis are
  all connected, routers at the same place in the chassis of a group are connected, and router
  ``b`` of chassis 0 of group ``a`` connects to router ``a`` of chassis 0 of group ``b``; routes are
  SimGrid's minimal ones (to the router of the own group that reaches the destination's group,
  one global hop, then a hop to the destination's blade and one to its chassis, continuing as
  SimGrid does from chassis 0 after the blade hop).

Every link is full duplex (each direction its own bandwidth) unless ``sharing = "shared"``;
a node's ``limiter`` is one more link that both directions of the node's traffic share.  This
module is pure arithmetic: :class:`Fabric` answers the links of a route, and
:mod:`.sharing` shares them between the messages that cross them.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any

from ..engine.records import FrozenRecord
from ..errors import MachineError

#: The kinds of ``[network.topology]``.
KINDS = ("star", "fat_tree", "torus", "dragonfly")
SHARING = ("splitduplex", "shared")
_TOPOLOGY_KEYS = ("kind", "parameters", "link", "levels", "sharing", "limiter")
_LINK_KEYS = ("latency", "bandwidth")


class TopologyLink(FrozenRecord):
    """A link class of a topology: ``latency`` seconds and ``bandwidth`` bytes per second."""

    __slots__ = _FIELDS = ("latency", "bandwidth")
    latency: float
    bandwidth: float

    def __init__(self, latency: float, bandwidth: float) -> None:
        object.__setattr__(self, "latency", float(latency))
        object.__setattr__(self, "bandwidth", float(bandwidth))


class Topology(FrozenRecord):
    """What ``[network.topology]`` says, validated (the links are built by :func:`fabric`)."""

    __slots__ = _FIELDS = ("kind", "parameters", "link", "levels", "sharing", "limiter")
    kind: str
    parameters: str
    link: TopologyLink
    #: fat trees: one link class per level (level 1 = node to first switch); empty: ``link`` everywhere
    levels: tuple[TopologyLink, ...]
    sharing: str
    #: bytes per second both directions of a node's traffic share (None: no limiter)
    limiter: float | None

    def __init__(
        self,
        kind: str,
        parameters: str,
        link: TopologyLink,
        levels: tuple[TopologyLink, ...] = (),
        sharing: str = "splitduplex",
        limiter: float | None = None,
    ) -> None:
        put = object.__setattr__
        put(self, "kind", kind)
        put(self, "parameters", parameters)
        put(self, "link", link)
        put(self, "levels", tuple(levels))
        put(self, "sharing", sharing)
        put(self, "limiter", limiter)

    def node_count(self, nodes: int) -> int:
        """How many nodes the topology connects (a star connects the machine's ``nodes``)."""
        if self.kind == "star":
            return nodes
        return _shape(self.kind, self.parameters, "<topology>").nodes

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, shaped like the TOML table."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "link": {"latency": self.link.latency, "bandwidth": self.link.bandwidth},
            "sharing": self.sharing,
        }
        if self.parameters:
            out["parameters"] = self.parameters
        if self.levels:
            out["levels"] = [{"latency": lk.latency, "bandwidth": lk.bandwidth} for lk in self.levels]
        if self.limiter is not None:
            out["limiter"] = self.limiter
        return out


# ---------------------------------------------------------------------------------------------
# Reading the machine file's table
# ---------------------------------------------------------------------------------------------


def parse_topology(source: str, value: Any, nodes: int, with_unit: Any, check_keys: Any) -> Topology:
    """Validate ``[network.topology]`` (``with_unit`` and ``check_keys`` are the machine file's
    own helpers, so units and did-you-mean hints read as for every other key)."""
    where = "network.topology"
    if not isinstance(value, dict):
        raise MachineError(f"{source}: '{where}' must be a table ([{where}]), got {value!r}")
    check_keys(source, where, value, _TOPOLOGY_KEYS)
    kind = value.get("kind")
    if kind not in KINDS:
        import difflib

        close = difflib.get_close_matches(str(kind), KINDS, n=1, cutoff=0.6)
        raise MachineError(
            f"{source}: [{where}] kind must be one of {', '.join(repr(k) for k in KINDS)}, got {kind!r}"
            + (f" (did you mean '{close[0]}'?)" if close else ""),
            hint='e.g. kind = "fat_tree", parameters = "2;4,4;1,2;1,1"',
        )
    parameters = value.get("parameters", "")
    if not isinstance(parameters, str):
        raise MachineError(f"{source}: [{where}] parameters must be a string, got {parameters!r}")
    if kind != "star":
        if not parameters:
            raise MachineError(
                f"{source}: [{where}] a {kind} needs parameters",
                hint={
                    "fat_tree": 'e.g. parameters = "2;4,4;1,2;1,1" (levels; children; parents; links)',
                    "torus": 'e.g. parameters = "4,4,4" (nodes per dimension)',
                    "dragonfly": 'e.g. parameters = "3,1;2,1;3,1;2" (groups; chassis; routers; nodes)',
                }[kind],
            )
        shape = _shape(kind, parameters, f"{source}: [{where}] parameters")
        if shape.nodes < nodes:
            raise MachineError(
                f"{source}: [{where}] a {kind} of parameters {parameters!r} connects {shape.nodes} "
                f"nodes, but the machine has {nodes}",
                hint="make the topology as large as the machine, or lower 'nodes'",
            )
    if "link" not in value:
        raise MachineError(
            f"{source}: [{where}] needs a link",
            hint='e.g. link = { latency = "1 us", bandwidth = "12.5 GB/s" }',
        )
    link = _topology_link(source, f"{where}.link", value["link"], with_unit, check_keys)
    levels_value = value.get("levels", [])
    if levels_value and kind != "fat_tree":
        raise MachineError(f"{source}: [{where}] levels are for fat trees only, this is a {kind}")
    if not isinstance(levels_value, list):
        raise MachineError(f"{source}: [{where}] levels must be a list of links, got {levels_value!r}")
    levels = tuple(
        _topology_link(source, f"{where}.levels[{i + 1}]", lk, with_unit, check_keys)
        for i, lk in enumerate(levels_value)
    )
    if levels and len(levels) != _shape(kind, parameters, source).levels:
        raise MachineError(
            f"{source}: [{where}] has {len(levels)} levels of links, the fat tree has "
            f"{_shape(kind, parameters, source).levels}",
            hint="give one link per level, from the nodes' links up, or none",
        )
    sharing = value.get("sharing", "splitduplex")
    if sharing not in SHARING:
        raise MachineError(
            f"{source}: [{where}] sharing must be 'splitduplex' (each direction its own bandwidth) "
            f"or 'shared' (both directions share it), got {sharing!r}"
        )
    limiter = value.get("limiter")
    if limiter is not None:
        limiter = with_unit(source, f"[{where}] bandwidth", limiter)
        if not isinstance(limiter, (int, float)) or isinstance(limiter, bool) or not 0 < limiter < math.inf:
            raise MachineError(
                f"{source}: [{where}] limiter must be a bandwidth (bytes per second), "
                f"got {value['limiter']!r}",
                hint='e.g. limiter = "12.5 GB/s": what one node can send and receive together',
            )
        limiter = float(limiter)
    return Topology(kind, parameters, link, levels, sharing, limiter)


def _topology_link(source: str, where: str, value: Any, with_unit: Any, check_keys: Any) -> TopologyLink:
    if not isinstance(value, dict):
        raise MachineError(f"{source}: [{where}] must be a table {{latency, bandwidth}}, got {value!r}")
    check_keys(source, where, value, _LINK_KEYS)
    latency = with_unit(source, f"[{where}] latency", value.get("latency", 0.0))
    bandwidth = with_unit(source, f"[{where}] bandwidth", value.get("bandwidth"))
    if not isinstance(latency, (int, float)) or isinstance(latency, bool) or not 0 <= latency < math.inf:
        raise MachineError(
            f"{source}: [{where}] latency must be a number of seconds (0 or more), got {latency!r}"
        )
    if not isinstance(bandwidth, (int, float)) or isinstance(bandwidth, bool) or not 0 < bandwidth < math.inf:
        raise MachineError(
            f"{source}: [{where}] bandwidth must be a positive number of bytes per second, got {bandwidth!r}",
            hint='e.g. bandwidth = "100 Gbit/s"',
        )
    return TopologyLink(float(latency), float(bandwidth))


class _Shape(FrozenRecord):
    __slots__ = _FIELDS = ("nodes", "levels", "numbers")
    nodes: int
    levels: int
    numbers: tuple[tuple[int, ...], ...]

    def __init__(self, nodes: int, levels: int, numbers: tuple[tuple[int, ...], ...]) -> None:
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "levels", levels)
        object.__setattr__(self, "numbers", numbers)


def _numbers(text: str, where: str) -> tuple[tuple[int, ...], ...]:
    try:
        parts = tuple(tuple(int(x) for x in part.split(",")) for part in text.replace(" ", "").split(";"))
    except ValueError:
        raise MachineError(
            f"{where}: {text!r} is not groups of whole numbers separated by ',' and ';'"
        ) from None
    if any(x < 1 for part in parts for x in part):
        raise MachineError(f"{where}: {text!r} has a number below 1")
    return parts


def _shape(kind: str, parameters: str, where: str) -> _Shape:
    """Check the ``parameters`` of a topology and say how many nodes and levels it has."""
    parts = _numbers(parameters, where)
    if kind == "fat_tree":
        h = parts[0][0] if len(parts[0]) == 1 else -1
        if len(parts) != 4 or h < 1 or any(len(p) != h for p in parts[1:]):
            raise MachineError(
                f"{where}: a fat tree is 'levels;children,...;parents,...;links,...' with one number "
                f"per level in the last three, got {parameters!r}",
                hint="e.g. '2;4,4;1,2;1,1': 2 levels, 4 children per switch, 1 then 2 parents, 1 link",
            )
        return _Shape(math.prod(parts[1]), h, parts)
    if kind == "torus":
        if len(parts) != 1:
            raise MachineError(f"{where}: a torus is 'x,y,...' (nodes per dimension), got {parameters!r}")
        return _Shape(math.prod(parts[0]), 1, parts)
    if len(parts) != 4 or [len(p) for p in parts] != [2, 2, 2, 1]:
        raise MachineError(
            f"{where}: a dragonfly is 'groups,links;chassis,links;routers,links;nodes', got {parameters!r}",
            hint="e.g. '3,1;2,1;3,1;2'",
        )
    (groups, _), (chassis, _), (routers, _), (per_router,) = parts
    if groups > 1 and routers < groups:
        raise MachineError(
            f"{where}: a dragonfly of {groups} groups needs at least {groups} routers per chassis "
            f"(router b of chassis 0 holds the link to group b), got {routers}"
        )
    return _Shape(groups * chassis * routers * per_router, 1, parts)


# ---------------------------------------------------------------------------------------------
# Links and routes
# ---------------------------------------------------------------------------------------------


class Fabric:
    """The links of a topology and the route between any two nodes.

    ``names[i]``, ``bandwidth[i]`` and ``latency[i]`` describe link direction ``i`` (a full-duplex
    link is two of them, ``name:up`` and ``name:down``); :meth:`route` answers the link
    directions a message from node ``a`` to node ``b`` crosses, in order, cached per pair.
    """

    def __init__(self, topology: Topology, nodes: int) -> None:
        self.topology = topology
        self.nodes = nodes
        self.names: list[str] = []
        self.bandwidth: list[float] = []
        self.latency: list[float] = []
        self._physical: dict[Any, tuple[int, int]] = {}
        self._routes: dict[int, tuple[int, ...]] = {}
        self._limiters: list[int] = []
        if topology.limiter is not None:
            for node in range(nodes):
                self._limiters.append(self._add(f"node{node}:limiter", 0.0, topology.limiter))
        kind = topology.kind
        if kind != "star":
            self._shape = _shape(kind, topology.parameters, "<topology>")
        if kind == "fat_tree":
            self._build_fat_tree()

    def _build_fat_tree(self) -> None:
        """Number every link of the fat tree at once: a route is then arithmetic, no lookup.

        The link from element ``(A, B)`` of level ``l`` to its parent ``j`` is physical link
        ``(A * w_1...w_l + B) * w_{l+1} + j`` of its level; its directions follow the level's
        offset (two per link, or one when both directions share it).  Names are made when asked.
        """
        down, up, parallel = self._shape.numbers[1], self._shape.numbers[2], self._shape.numbers[3]
        #: products of the children and of the parent counts of the levels below each level
        self._mprod = [math.prod(down[:level]) for level in range(len(down) + 1)]
        self._wprod = [math.prod(up[:level]) for level in range(len(up) + 1)]
        self._per = 1 if self.topology.sharing == "shared" else 2
        total = math.prod(down)
        self._offsets: list[int] = []
        prefix = list(self.names)
        for level in range(len(down)):
            count = (
                (total // self._mprod[level]) * self._wprod[level] * up[level] * parallel[level] * self._per
            )
            self._offsets.append(len(self.latency))
            link = self._level_link(level + 1)
            self.latency.extend([link.latency] * count)
            self.bandwidth.extend([link.bandwidth] * count)
        self.names = _Names(prefix, len(self.latency), self._fat_tree_name)  # type: ignore[assignment]

    # -- building ------------------------------------------------------------------------

    def _add(self, name: str, latency: float, bandwidth: float) -> int:
        self.names.append(name)
        self.latency.append(latency)
        self.bandwidth.append(bandwidth)
        return len(self.names) - 1

    def _link(self, key: Any, name: str, link: TopologyLink) -> tuple[int, int]:
        """The (up, down) directions of the physical link ``key``, made on first use."""
        hit = self._physical.get(key)
        if hit is None:
            if self.topology.sharing == "shared":
                one = self._add(name, link.latency, link.bandwidth)
                hit = (one, one)
            else:
                up = self._add(f"{name}:up", link.latency, link.bandwidth)
                hit = (up, self._add(f"{name}:down", link.latency, link.bandwidth))
            self._physical[key] = hit
        return hit

    # -- routes --------------------------------------------------------------------------

    def route(self, a: int, b: int, remember: bool = True) -> tuple[int, ...]:
        """Link directions from node ``a`` to node ``b`` (empty for ``a == b``).

        Kept per pair unless ``remember`` is false (for a caller that keeps its own).
        """
        key = a * self.nodes + b
        hit = self._routes.get(key)
        if hit is None:
            if a == b:
                hit = ()
            else:
                path = getattr(self, f"_route_{self.topology.kind}")(a, b)
                if self._limiters:
                    path = [self._limiters[a], *path, self._limiters[b]]
                hit = tuple(path)
            if remember:
                self._routes[key] = hit
        return hit

    def route_latency(self, route: Sequence[int]) -> float:
        """Seconds of latency of a route: the sum over its hops."""
        latency = self.latency
        return sum(latency[i] for i in route)

    def _route_star(self, a: int, b: int) -> list[int]:
        link = self.topology.link
        return [self._link(("node", a), f"node{a}", link)[0], self._link(("node", b), f"node{b}", link)[1]]

    def _level_link(self, level: int) -> TopologyLink:
        levels = self.topology.levels
        return levels[level - 1] if levels else self.topology.link

    def _route_fat_tree(self, a: int, b: int) -> list[int]:
        """Up by D-mod-k to the first switch above both nodes, then down, as SimGrid routes.

        An element of level ``l`` is ``(A, B)``: ``A`` the node number's digits above level ``l``
        (``node // m_1...m_l``), ``B`` the parent choices made on the way up (digits in radix
        ``w_1..w_l``).  Up, the destination's number picks the parent
        (``(b div w_1...w_l) mod w_{l+1}``) and the parallel link
        (``(b div w_1...w_{l+1}) mod p_{l+1}``).  Down, SimGrid (3.32) scans the switch's child
        slots from ``(source mod p) * m`` on and takes each slot whose child leads to the
        destination, going on with the next slots of the child it reached: the parallel link of a
        lower hop depends on where that scan stands (checked link by link against SimGrid).
        """
        down, up, parallel = self._shape.numbers[1], self._shape.numbers[2], self._shape.numbers[3]
        mprod, wprod, offsets, per = self._mprod, self._wprod, self._offsets, self._per
        route: list[int] = []
        level, big_a, big_b = 0, a, 0
        while a // mprod[level] != b // mprod[level]:
            j = (b // wprod[level]) % up[level]
            k = (b // wprod[level + 1]) % parallel[level]
            physical = ((big_a * wprod[level] + big_b) * up[level] + j) * parallel[level] + k
            route.append(offsets[level] + physical * per)
            big_a //= down[level]
            big_b += j * wprod[level]
            level += 1
        back = per - 1  # the down direction follows the up one (the same when shared)
        while level > 0:
            below = level - 1
            i = (a % parallel[below]) * down[below]
            while level > 0 and i < down[level - 1] * parallel[level - 1]:
                below = level - 1
                if i % down[below] == (b // mprod[below]) % down[below]:
                    j, big_b = divmod(big_b, wprod[below])
                    big_a = big_a * down[below] + i % down[below]
                    physical = ((big_a * wprod[below] + big_b) * up[below] + j) * parallel[below] + i // down[
                        below
                    ]
                    route.append(offsets[below] + physical * per + back)
                    level = below
                i += 1
        return route

    def _fat_tree_name(self, index: int) -> str:
        """The name of link direction ``index`` of the fat tree (``sw1(0;0)-3:up``, as in traces)."""
        level = bisect.bisect_right(self._offsets, index) - 1
        down, up = self._shape.numbers[1], self._shape.numbers[2]
        physical, direction = divmod(index - self._offsets[level], self._per)
        parallel = self._shape.numbers[3][level]
        physical, k = divmod(physical, parallel)
        element, j = divmod(physical, up[level])
        big_a, big_b = divmod(element, self._wprod[level])
        if level == 0:
            name = f"node{big_a}"
        else:
            digits, choices = [], []
            for m in down[level:]:
                digits.append(big_a % m)
                big_a //= m
            for w in up[:level]:
                choices.append(big_b % w)
                big_b //= w
            name = f"sw{level}(" + ",".join(map(str, digits)) + ";" + ",".join(map(str, choices)) + ")"
        suffix = "" if self._per == 1 else (":up", ":down")[direction]
        return f"{name}-{j}{f'.{k}' if parallel > 1 else ''}{suffix}"

    def _route_torus(self, a: int, b: int) -> list[int]:
        dims = self._shape.numbers[0]
        link = self.topology.link
        route: list[int] = []
        current = a
        while current != b:
            product = 1
            for k, size in enumerate(dims):
                mine, target = (current // product) % size, (b // product) % size
                if mine != target:
                    half = size // 2
                    if (mine < target <= mine + half) or (mine > half and (mine + half) % size >= target):
                        nxt = current + product - (product * size if mine == size - 1 else 0)
                        route.append(self._link(("torus", current, k), f"node{current}-d{k}", link)[0])
                    else:
                        nxt = current - product + (product * size if mine == 0 else 0)
                        route.append(self._link(("torus", nxt, k), f"node{nxt}-d{k}", link)[1])
                    current = nxt
                    break
                product *= size
        return route

    def _route_dragonfly(self, a: int, b: int) -> list[int]:
        (_, _), (chassis, _), (routers, _), (per_router,) = self._shape.numbers
        link = self.topology.link

        def where(node: int) -> tuple[int, int, int]:
            r = node // per_router
            return r // (routers * chassis), (r // routers) % chassis, r % routers

        def hop(x: tuple[int, int, int], y: tuple[int, int, int], kind: str) -> int:
            first, second = min(x, y), max(x, y)
            name = "router{}-{}-{}".format(*first) + f"={kind}=" + "router{}-{}-{}".format(*second)
            up, down = self._link(("df", first, second), name, link)
            return up if x == first else down

        src, dst = where(a), where(b)
        route = [self._link(("dfnode", a), f"node{a}", link)[0]]
        cur = src
        if dst[0] != cur[0]:
            target_group = dst[0]
            if cur[2] != target_group:
                nxt = (cur[0], cur[1], target_group)
                route.append(hop(cur, nxt, "green"))
                cur = nxt
            if cur[1] != 0:
                nxt = (cur[0], 0, cur[2])
                route.append(hop(cur, nxt, "black"))
                cur = nxt
            nxt = (target_group, 0, src[0])
            route.append(hop(cur, nxt, "blue"))
            cur = nxt
        if cur[2] != dst[2]:
            nxt = (cur[0], cur[1], dst[2])
            route.append(hop(cur, nxt, "green"))
            # SimGrid's minimal routing continues from the destination's blade in chassis 0 of
            # the group (not from the chassis the green hop reached); routes follow it exactly
            cur = (cur[0], 0, dst[2])
        if cur[1] != dst[1]:
            nxt = (cur[0], dst[1], cur[2])
            route.append(hop(cur, nxt, "black"))
            cur = nxt
        route.append(self._link(("dfnode", b), f"node{b}", link)[1])
        return route


class _Names(Sequence[str]):
    """Link names made when asked: the first ones stored, the rest decoded from the index."""

    def __init__(self, first: list[str], total: int, decode: Any) -> None:
        self._first = first
        self._total = total
        self._decode = decode

    def __len__(self) -> int:
        return self._total

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._total))]
        if index < 0:
            index += self._total
        if not 0 <= index < self._total:
            raise IndexError(index)
        return self._first[index] if index < len(self._first) else self._decode(index)


def fabric(topology: Topology, nodes: int) -> Fabric:
    """The links and routes of ``topology`` for a machine of ``nodes`` nodes."""
    return Fabric(topology, nodes)
