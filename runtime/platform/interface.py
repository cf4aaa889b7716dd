"""The network between processes, behind one interface with two implementations.

A run asks its network four things: which routes of the simulator move its messages
(:attr:`Network.routes`, naming the process contexts ``engine/simulation.py`` gives the run),
what one message costs alone (latency and seconds per byte), which schedule and per-rank finish
offsets a collective has, and whether the closed-form (analytic) path is exact for a model on
this placement.  :class:`Network` states them once; the simulation, the communication state and
the analytic path ask :func:`network_of` for the machine's network once per run and talk to
that object only.

* :class:`PairNetwork` is the per-pair model: a message's time depends on its two nodes and its
  size alone (``[network]`` of the machine file), so the direct routes fix its arrival when it
  is sent.
* :class:`SharedLinkNetwork` is the model of a machine with ``[network.topology]``: messages
  between nodes are flows that share their route's links max-min fairly
  (:mod:`.topology`, :mod:`.sharing`, :mod:`..operations.over_links`); a message's time alone
  is its route's latency and its slowest link.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import MachineError

__all__ = ["Network", "PairNetwork", "SharedLinkNetwork", "network_of"]


class Network(ABC):
    """What a run asks of its network (see the module docstring)."""

    #: Whether messages in flight slow each other (then a message's time is known only as it ends).
    shares_links: bool = False
    #: The simulator's routes for this network: ``"direct"`` (arrivals fixed when sent, the
    #: contexts of ``engine/context.py``) or ``"links"`` (flows, ``engine/link_context.py``).
    routes: str = "direct"

    def __init__(self, machine: Any) -> None:
        self.machine = machine

    def message_line(self, node_a: int, node_b: int, size: float) -> tuple[float, float]:
        """``(latency, seconds per byte)`` of a ``size``-byte message from ``node_a`` to ``node_b`` alone."""
        return self.pair_line(node_a, node_b, size)

    def pair_line(self, node_a: int, node_b: int, size: float) -> tuple[float, float]:
        """The machine's link between two nodes as ``(latency, seconds per byte)``.

        Its line for every size, or the line of the size range ``size`` falls in
        (``ranges``/``table``; then :meth:`sized` is true).  Messages inside a node cost this on
        either network.
        """
        lk = self.machine.link(node_a, node_b)
        if getattr(lk, "pieces", None) is not None:
            alpha, beta = lk.piece(size)
            return alpha, beta
        return float(lk.latency), 0.0 if lk.bandwidth == math.inf else 1.0 / lk.bandwidth

    def sized(self, node_a: int, node_b: int) -> bool:
        """Whether the link between two nodes prices messages per size range (no line for every size)."""
        return getattr(self.machine.link(node_a, node_b), "pieces", None) is not None

    def handshake(self, node_a: int, node_b: int) -> float:
        """Seconds of the rendezvous handshake between two nodes (the link's ``handshake``)."""
        return float(getattr(self.machine.link(node_a, node_b), "handshake", 0.0))

    def message_time(self, node_a: int, node_b: int, size: float) -> float:
        """Seconds a ``size``-byte message from ``node_a`` to ``node_b`` takes alone."""
        latency, beta = self.message_line(node_a, node_b, size)
        return latency + size * beta

    def collective_model(self, node_of: Sequence[int]) -> Any:
        """The collectives' schedules and per-rank finish offsets on this placement.

        A :class:`~.network.CollectiveModel` (imported here: its schedules need numpy, which a
        model without collectives should not pay for).  A bad ``[collectives]`` table is a
        :class:`~uml2perf_runtime.errors.MachineError` naming the machine file.
        """
        from .network import CollectiveModel

        try:
            return CollectiveModel.for_machine(self.machine, list(node_of))
        except ValueError as exc:
            where = getattr(self.machine, "source", None) or f"machine '{self.machine.name}'"
            raise MachineError(f"{where}: [collectives] {exc}") from None

    @abstractmethod
    def analytic_refusal(self, elements: Iterable[Any], node_of: Sequence[int]) -> str | None:
        """Why the closed form is not exact for a model's ``elements`` on this placement (None: it is)."""


class PairNetwork(Network):
    """The per-pair network: a message's time depends only on its two nodes and its size."""

    shares_links = False
    routes = "direct"

    def analytic_refusal(self, elements: Iterable[Any], node_of: Sequence[int]) -> str | None:
        return None


class SharedLinkNetwork(Network):
    """The links of ``[network.topology]``, shared max-min fairly by the messages crossing them."""

    shares_links = True
    routes = "links"

    def __init__(self, machine: Any) -> None:
        super().__init__(machine)
        self._fabric: Any = None
        #: per node pair: (route, its latency, its slowest bandwidth)
        self._paths: dict[int, tuple[tuple[int, ...], float, float]] = {}

    @property
    def fabric(self) -> Any:
        """The topology's links and routes (:class:`~.topology.Fabric`), made on first use."""
        if self._fabric is None:
            from .topology import fabric

            self._fabric = fabric(self.machine.topology, self.machine.nodes)
        return self._fabric

    def path(self, node_a: int, node_b: int) -> tuple[tuple[int, ...], float, float]:
        """The route between two nodes (link directions), its latency (summed over its hops) and
        its slowest bandwidth: what a message crosses, and what it pays alone.

        Kept per node pair, except on a fat tree, whose routes are arithmetic and cheaper to make
        again than to keep for every pair.
        """
        fabric = self.fabric
        key = node_a * fabric.nodes + node_b
        hit = self._paths.get(key)
        if hit is None:
            route = fabric.route(node_a, node_b, remember=False)
            bandwidth = fabric.bandwidth
            hit = (route, fabric.route_latency(route), min(bandwidth[i] for i in route))
            if fabric.topology.kind != "fat_tree":
                self._paths[key] = hit
        return hit

    def message_line(self, node_a: int, node_b: int, size: float) -> tuple[float, float]:
        """Inside a node the per-pair line; between nodes the route's latency and slowest link.

        With size ranges on ``[network.inter_node]``, the range's line bounds the message alone
        (no less latency, no more bandwidth), as :class:`~..operations.over_links.LinkNetwork`
        moves it.
        """
        if node_a == node_b:
            return self.pair_line(node_a, node_b, size)
        _, latency, slowest = self.path(node_a, node_b)
        if self.sized(node_a, node_b):
            alpha, beta = self.pair_line(node_a, node_b, size)
            latency = max(latency, alpha)
            if beta > 0.0:
                slowest = min(slowest, 1.0 / beta)
        return latency, 0.0 if slowest == math.inf else 1.0 / slowest

    def analytic_refusal(self, elements: Iterable[Any], node_of: Sequence[int]) -> str | None:
        """Messages between nodes share links, which the closed form does not follow.

        It stays exact (and is used) when everything runs on one node or the model sends nothing.
        """
        if len(set(node_of)) < 2:
            return None
        from ..operations.registry import OPERATIONS

        for elem in elements:
            if elem.kind in OPERATIONS or elem.kind == "collective":
                return (
                    "the machine's [network.topology] shares links between messages, and element "
                    f"{elem.describe()} sends messages between nodes"
                )
        return None


def network_of(machine: Any) -> Network:
    """The network of ``machine``: shared links with ``[network.topology]``, per pair without."""
    if getattr(machine, "topology", None) is not None:
        return SharedLinkNetwork(machine)
    return PairNetwork(machine)
