"""Network cost model: point-to-point message times and collective algorithm schedules.

This module is pure arithmetic (no SimPy) so that the formulas can be read, tested and reused
on their own.  Schedules are plain lists; numpy evaluates only collectives of many transfers
(it is imported then, and never for a small run).  ``comm.py`` asks it two questions:

* how long does one message of ``size`` bytes take on a link (``latency + size/bandwidth``);
* when does each process finish a collective operation that all processes entered at the
  same instant (:class:`CollectiveModel`).

Collectives are described as *schedules*: a sequence of synchronous steps, each a set of
concurrent transfers ``src -> dst`` of some bytes.  A step lasts as long as its slowest
transfer (``alpha + bytes * beta`` of the link class between the two processes' nodes), plus
the reduction time ``gamma * bytes`` for reducing steps.  A process is done with the collective
at the end of the last step in which it sends or receives.  Describing algorithms this way keeps
the closed forms of the literature (``ceil(log2 p) * (alpha + n*beta)`` and friends) on a
homogeneous network, and extends them soundly to several nodes: a step that crosses nodes costs
what the inter-node link costs.

Notation used throughout (and in ``docs/runtime-semantics.md``): ``p`` processes, ``n`` bytes,
``alpha`` latency in seconds, ``beta = 1/bandwidth`` seconds per byte, ``L = ceil(log2 p)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..engine.records import FrozenRecord
from ..operations.registry import OPERATIONS

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = [
    "COLLECTIVE_KINDS",
    "ALGORITHMS",
    "DEFAULT_ALGORITHMS",
    "LinkLike",
    "Step",
    "CollectiveModel",
    "transfer_time",
    "ceil_log2",
    "resolve_algorithm",
    "schedule",
    "block_schedule",
    "BLOCK_ALGORITHMS",
    "VARIABLE_BLOCKS",
]


#: Message size thresholds of the ``auto`` choices (bytes), the ones MPICH uses by default.
BCAST_SHORT_MSG = 12 * 1024
BCAST_MIN_PROCS = 8
ALLREDUCE_SHORT_MSG = 2 * 1024
ALLGATHER_SHORT_TOTAL = 80 * 1024
#: The runtime's eager limit when a machine sets none (``machine.DEFAULT_EAGER_LIMIT``, which
#: this module cannot import: the machine module imports this one).
DEFAULT_EAGER_LIMIT = 64 * 1024


class LinkLike(Protocol):
    """Anything with a latency (seconds) and a bandwidth (bytes per second)."""

    latency: float
    bandwidth: float


def transfer_time(latency: float, bandwidth: float, size: float) -> float:
    """Time for one message of ``size`` bytes on a link: ``latency + size / bandwidth``.

    An infinite bandwidth means the size costs nothing; a message of 0 bytes still pays the
    latency, because even an empty MPI message is a round of the protocol.
    """
    if size <= 0 or bandwidth == math.inf:
        return float(latency)
    return latency + size / bandwidth


def ceil_log2(p: int) -> int:
    """``ceil(log2 p)`` for ``p >= 1`` computed exactly on integers (0 for ``p = 1``)."""
    return (p - 1).bit_length()


def _floor_pow2(p: int) -> int:
    """The largest power of two not above ``p``."""
    return 1 << (p.bit_length() - 1)


# ---------------------------------------------------------------------------------------------
# Schedules
# ---------------------------------------------------------------------------------------------


class Step(FrozenRecord):
    """One synchronous round of a collective algorithm.

    ``src[k] -> dst[k]`` moves ``nbytes`` (a scalar, or one value per transfer) bytes; all
    transfers of the step run concurrently (full-duplex links: a process that sends and
    receives in the same step pays once).  ``repeat`` identical rounds follow each other (ring
    algorithms repeat the same neighbour pattern ``p - 1`` times).  ``reduce_bytes`` is the
    number of bytes each receiver combines after the transfer (``gamma`` seconds per byte).
    ``everyone`` says that every rank sends in this round (lets the evaluation skip per-rank
    bookkeeping for the symmetric rounds of ring and exchange algorithms).
    Ranks are *virtual* (relative to the root); :func:`schedule` maps them back.
    """

    src: list[int]
    dst: list[int]
    nbytes: float | list[float]
    repeat: int
    reduce_bytes: float
    everyone: bool

    __slots__ = _FIELDS = ("src", "dst", "nbytes", "repeat", "reduce_bytes", "everyone")

    def __init__(
        self,
        src: list[int],
        dst: list[int],
        nbytes: float | list[float],
        repeat: int = 1,
        reduce_bytes: float = 0.0,
        everyone: bool = False,
    ) -> None:
        put = object.__setattr__
        put(self, "src", src)
        put(self, "dst", dst)
        put(self, "nbytes", nbytes)
        put(self, "repeat", repeat)
        put(self, "reduce_bytes", reduce_bytes)
        put(self, "everyone", everyone)


def _step(
    src: list[int],
    dst: list[int],
    nbytes: float | list[float],
    repeat: int = 1,
    reduce_bytes: float = 0.0,
) -> Step:
    bytes_value = [float(x) for x in nbytes] if isinstance(nbytes, list) else float(nbytes)
    return Step(src, dst, bytes_value, repeat, float(reduce_bytes))


def _binomial_bcast(p: int, n: float) -> list[Step]:
    """Binomial tree: in round k every process that has the data sends it ``2**k`` ranks on."""
    steps = []
    for k in range(ceil_log2(p)):
        span = 1 << k
        senders = list(range(min(span, p - span)))
        steps.append(_step(senders, [r + span for r in senders], n))
    return steps


def _binomial_reduce(p: int, n: float) -> list[Step]:
    """Mirror of the binomial broadcast: round k folds rank ``r`` into ``r - 2**k``."""
    steps = []
    for k in range(ceil_log2(p)):
        span = 1 << k
        senders = list(range(span, p, 2 * span))
        steps.append(_step(senders, [r - span for r in senders], n, reduce_bytes=n))
    return steps


def _binomial_gather(p: int, n: float) -> list[Step]:
    """Binomial gather of ``n`` bytes per process: a sender forwards its whole subtree."""
    steps = []
    for k in range(ceil_log2(p)):
        span = 1 << k
        senders = list(range(span, p, 2 * span))
        steps.append(_step(senders, [r - span for r in senders], [n * min(span, p - r) for r in senders]))
    return steps


def _binomial_scatter(p: int, n: float) -> list[Step]:
    """Binomial scatter of ``n`` bytes per process: the gather schedule run backwards."""
    steps = []
    for k in reversed(range(ceil_log2(p))):
        span = 1 << k
        receivers = list(range(span, p, 2 * span))
        steps.append(
            _step([r - span for r in receivers], receivers, [n * min(span, p - r) for r in receivers])
        )
    return steps


def _linear_out(p: int, n: float) -> list[Step]:
    """The root sends to rank 1, then 2, ... one message per round."""
    return [_step([0], [r], n) for r in range(1, p)]


def _linear_in(p: int, n: float, reduce: bool = False) -> list[Step]:
    """The root receives from rank 1, then 2, ... one message per round."""
    return [_step([r], [0], n, reduce_bytes=n if reduce else 0.0) for r in range(1, p)]


def _ring(p: int, n: float, rounds: int, reduce: bool = False) -> Step:
    ranks = list(range(p))
    return Step(ranks, [(r + 1) % p for r in ranks], float(n), rounds, float(n) if reduce else 0.0, True)


def _dissemination(p: int, n: float) -> list[Step]:
    """Round k: every rank ``r`` sends to ``(r + 2**k) mod p``; works for any p."""
    ranks = list(range(p))
    return [
        Step(ranks, [(r + (1 << k)) % p for r in ranks], float(n), everyone=True) for k in range(ceil_log2(p))
    ]


def _exchange(ranks: list[int], mask: int, n: float, reduce: bool, everyone: bool) -> Step:
    return Step(ranks, [r ^ mask for r in ranks], float(n), 1, float(n) if reduce else 0.0, everyone)


def _fold_in(p: int, n: float) -> tuple[int, list[Step]]:
    """For p not a power of two, fold the ``p - p2`` extra ranks into the first ones first."""
    p2 = _floor_pow2(p)
    extra = list(range(p2, p))
    if not extra:
        return p2, []
    return p2, [_step(extra, [r - p2 for r in extra], n, reduce_bytes=n)]


def _fold_out(p: int, p2: int, n: float) -> list[Step]:
    extra = list(range(p2, p))
    return [_step([r - p2 for r in extra], extra, n)] if extra else []


def _allreduce_recursive_doubling(p: int, n: float) -> list[Step]:
    """Pairwise exchanges at distance 1, 2, 4, ... among the largest power of two p2;
    the ``p - p2`` extra ranks are folded in before and served after (two more rounds)."""
    p2, steps = _fold_in(p, n)
    ranks = list(range(p2))
    steps += [_exchange(ranks, 1 << k, n, True, p2 == p) for k in range(p2.bit_length() - 1)]
    return steps + _fold_out(p, p2, n)


def _allreduce_rabenseifner(p: int, n: float) -> list[Step]:
    """Reduce-scatter by recursive halving then allgather by recursive doubling (p2 ranks);
    extra ranks are folded in and out as in recursive doubling."""
    p2, steps = _fold_in(p, n)
    ranks = list(range(p2))
    levels = p2.bit_length() - 1
    full = p2 == p
    halving = [_exchange(ranks, p2 >> (k + 1), n / (2 << k), True, full) for k in range(levels)]
    doubling = [_exchange(ranks, p2 >> (k + 1), n / (2 << k), False, full) for k in reversed(range(levels))]
    return steps + halving + doubling + _fold_out(p, p2, n)


def _allreduce_ring(p: int, n: float) -> list[Step]:
    """Ring reduce-scatter then ring allgather of ``n/p`` byte chunks: ``2(p-1)`` rounds."""
    return [_ring(p, n / p, p - 1, reduce=True), _ring(p, n / p, p - 1)]


def _allgather_recursive_doubling(p: int, n: float) -> list[Step]:
    """Exchange 1, 2, 4, ... blocks with the partner at distance 1, 2, 4, ...; p a power of
    two (other p use Bruck's algorithm, which has the same cost shape)."""
    if p & (p - 1):
        return _allgather_bruck(p, n)
    ranks = list(range(p))
    return [_exchange(ranks, 1 << k, n * (1 << k), False, True) for k in range(ceil_log2(p))]


def _allgather_bruck(p: int, n: float) -> list[Step]:
    """Bruck: round k sends ``min(2**k, p - 2**k)`` blocks to ``r - 2**k``; any p."""
    ranks = list(range(p))
    return [
        Step(ranks, [(r - (1 << k)) % p for r in ranks], n * min(1 << k, p - (1 << k)), everyone=True)
        for k in range(ceil_log2(p))
    ]


def _alltoall_pairwise(p: int, n: float) -> list[Step]:
    """Round s = 1 .. p-1: every rank sends its block for ``r + s`` and receives from ``r - s``."""
    ranks = list(range(p))
    return [Step(ranks, [(r + s) % p for r in ranks], float(n), everyone=True) for s in range(1, p)]


def _alltoall_bruck(p: int, n: float) -> list[Step]:
    """Bruck: round k forwards every block whose index has bit k set to ``r + 2**k``."""
    ranks = list(range(p))
    steps = []
    for k in range(ceil_log2(p)):
        blocks = sum(1 for i in range(p) if i >> k & 1)
        steps.append(Step(ranks, [(r + (1 << k)) % p for r in ranks], n * blocks, everyone=True))
    return steps


def _reduce_scatter_ring(p: int, n: float) -> list[Step]:
    """Ring: ``p - 1`` rounds; each rank passes one block of ``n`` bytes on and combines the one
    it received, so that each ends with its own block of the sum."""
    return [_ring(p, n, p - 1, reduce=True)]


def _reduce_scatter_halving(p: int, n: float) -> list[Step]:
    """Recursive halving (p a power of two): round k exchanges and combines the half of what is
    left, ``n * p / 2**(k+1)`` bytes, with the partner at distance ``p / 2**(k+1)``; other p use
    the ring."""
    if p & (p - 1):
        return _reduce_scatter_ring(p, n)
    ranks = list(range(p))
    return [_exchange(ranks, p >> (k + 1), n * (p >> (k + 1)), True, True) for k in range(p.bit_length() - 1)]


def _scan_recursive_doubling(p: int, n: float) -> list[Step]:
    """Round k: rank ``r`` sends its partial prefix to ``r + 2**k`` and combines what ``r - 2**k``
    sent: ``ceil(log2 p)`` rounds of ``n`` bytes (an exclusive scan takes the same rounds)."""
    steps = []
    for k in range(ceil_log2(p)):
        span = 1 << k
        senders = list(range(p - span))
        steps.append(_step(senders, [r + span for r in senders], n, reduce_bytes=n))
    return steps


def _scan_linear(p: int, n: float) -> list[Step]:
    """Rank ``r`` waits for the prefix of ``r - 1``, combines its own and passes it on."""
    return [_step([r], [r + 1], n, reduce_bytes=n) for r in range(p - 1)]


def _bcast_scatter_allgather(p: int, n: float) -> list[Step]:
    """Van de Geijn: binomial scatter of ``n/p`` chunks, then a ring allgather of them."""
    chunk = n / p
    return _binomial_scatter(p, chunk) + [_ring(p, chunk, p - 1)]


def _tree_barrier(p: int, n: float) -> list[Step]:
    """Binomial fan-in to rank 0 then binomial fan-out: ``2 L`` rounds of zero-byte messages."""
    return [Step(s.src, s.dst, 0.0) for s in _binomial_reduce(p, 0.0)] + _binomial_bcast(p, 0.0)


Builder = Callable[[int, float], list[Step]]

#: Algorithms per collective; the first name is the default unless DEFAULT_ALGORITHMS says ``auto``.
ALGORITHMS: dict[str, dict[str, Builder]] = {
    "barrier": {
        "dissemination": lambda p, n: _dissemination(p, 0.0),
        "tree": lambda p, n: _tree_barrier(p, 0.0),
    },
    "bcast": {
        "binomial": _binomial_bcast,
        "linear": _linear_out,
        "scatter_allgather": _bcast_scatter_allgather,
    },
    "reduce": {"binomial": _binomial_reduce, "linear": lambda p, n: _linear_in(p, n, reduce=True)},
    "allreduce": {
        "recursive_doubling": _allreduce_recursive_doubling,
        "ring": _allreduce_ring,
        "rabenseifner": _allreduce_rabenseifner,
        "reduce_bcast": lambda p, n: _binomial_reduce(p, n) + _binomial_bcast(p, n),
    },
    "gather": {"binomial": _binomial_gather, "linear": _linear_in},
    "scatter": {"binomial": _binomial_scatter, "linear": _linear_out},
    "allgather": {
        "ring": lambda p, n: [_ring(p, n, p - 1)],
        "bruck": _allgather_bruck,
        "recursive_doubling": _allgather_recursive_doubling,
    },
    "alltoall": {"pairwise": _alltoall_pairwise, "bruck": _alltoall_bruck},
    "reduce_scatter": {"recursive_halving": _reduce_scatter_halving, "ring": _reduce_scatter_ring},
    "scan": {"recursive_doubling": _scan_recursive_doubling, "linear": _scan_linear},
    "exscan": {"recursive_doubling": _scan_recursive_doubling, "linear": _scan_linear},
}

# a collective added to the table of operations brings its own schedules (operations/registry.py)
ALGORITHMS.update(
    {name: dict(op.schedules) for name, op in OPERATIONS.items() if op.schedules and name not in ALGORITHMS}
)

COLLECTIVE_KINDS = tuple(ALGORITHMS)

#: What a machine file without a ``[collectives]`` entry gets.
DEFAULT_ALGORITHMS: dict[str, str] = {
    "barrier": "dissemination",
    "bcast": "auto",
    "reduce": "binomial",
    "allreduce": "auto",
    "gather": "binomial",
    "scatter": "binomial",
    "allgather": "auto",
    "alltoall": "pairwise",
}
DEFAULT_ALGORITHMS.update(
    {name: next(iter(ALGORITHMS[name])) for name in ALGORITHMS if name not in DEFAULT_ALGORITHMS}
)


def resolve_algorithm(kind: str, choice: str | None, p: int, n: float) -> str:
    """Turn a configured choice (``None`` or ``auto`` = the default rule) into an algorithm name.

    The ``auto`` rules follow MPICH's defaults: broadcast uses the binomial tree for messages
    below 12 KiB or fewer than 8 processes, else scatter + allgather; allreduce uses recursive
    doubling up to 2 KiB, else Rabenseifner; allgather uses recursive doubling (power-of-two p)
    or Bruck while the gathered total ``p * n`` stays below 80 KiB, else the ring.
    Raises ``ValueError`` naming the valid choices for an unknown kind or algorithm.
    """
    if kind not in ALGORITHMS:
        raise ValueError(f"unknown collective {kind!r}; known: {', '.join(COLLECTIVE_KINDS)}")
    name = (choice or DEFAULT_ALGORITHMS[kind]).strip().lower().replace("-", "_")
    if name != "auto":
        if name not in ALGORITHMS[kind]:
            raise ValueError(
                f"unknown {kind} algorithm {choice!r}; choose one of auto, {', '.join(ALGORITHMS[kind])}"
            )
        return name
    if kind == "bcast":
        return "binomial" if n < BCAST_SHORT_MSG or p < BCAST_MIN_PROCS else "scatter_allgather"
    if kind == "allreduce":
        return "recursive_doubling" if n <= ALLREDUCE_SHORT_MSG else "rabenseifner"
    if kind == "allgather":
        if p * n < ALLGATHER_SHORT_TOTAL:
            return "bruck" if p & (p - 1) else "recursive_doubling"
        return "ring"
    return next(iter(ALGORITHMS[kind]))


def schedule(kind: str, algorithm: str, p: int, n: float, root: int = 0) -> list[Step]:
    """The steps of ``algorithm`` for ``kind`` on ``p`` processes, in real (not virtual) ranks.

    Rooted algorithms are written for root 0; the ranks are rotated so that virtual rank 0 is
    ``root``.  For ``p = 1`` there are no steps.
    """
    if p <= 1:
        return []
    return _rotated(ALGORITHMS[kind][algorithm](p, float(n)), root % p, p)


def _rotated(steps: list[Step], shift: int, p: int) -> list[Step]:
    """``steps`` written for root 0 with every rank moved ``shift`` places on (root ``shift``)."""
    if shift == 0:
        return steps
    return [
        Step(
            [(r + shift) % p for r in s.src],
            [(r + shift) % p for r in s.dst],
            s.nbytes,
            s.repeat,
            s.reduce_bytes,
            s.everyone,
        )
        for s in steps
    ]


# ---------------------------------------------------------------------------------------------
# Schedules of blocks that differ per rank (MPI_Gatherv, Scatterv, Allgatherv, Alltoallv,
# Reduce_scatter)
# ---------------------------------------------------------------------------------------------

#: Blocks of a call: per (virtual) rank the bytes it contributes or receives, or for an
#: all-to-all per rank the row of bytes it sends to each rank.
Blocks = tuple[float, ...] | tuple[tuple[float, ...], ...]


def _subtree(blocks: Sequence[float], r: int, span: int) -> float:
    """The bytes of the ``min(span, p - r)`` blocks of a binomial subtree rooted at rank ``r``."""
    return float(sum(blocks[r : r + span]))


def _binomial_gather_blocks(p: int, blocks: Sequence[float]) -> list[Step]:
    """Binomial gather: a sender forwards its subtree's blocks, whatever their sizes."""
    steps = []
    for k in range(ceil_log2(p)):
        span = 1 << k
        senders = list(range(span, p, 2 * span))
        steps.append(
            _step(senders, [r - span for r in senders], [_subtree(blocks, r, span) for r in senders])
        )
    return steps


def _binomial_scatter_blocks(p: int, blocks: Sequence[float]) -> list[Step]:
    """Binomial scatter: the gather of the same blocks run backwards."""
    steps = []
    for k in reversed(range(ceil_log2(p))):
        span = 1 << k
        receivers = list(range(span, p, 2 * span))
        sizes = [_subtree(blocks, r, span) for r in receivers]
        steps.append(_step([r - span for r in receivers], receivers, sizes))
    return steps


def _linear_in_blocks(p: int, blocks: Sequence[float]) -> list[Step]:
    """The root receives rank 1's block, then rank 2's, ... (what MPI libraries do for Gatherv)."""
    return [_step([r], [0], blocks[r]) for r in range(1, p)]


def _linear_out_blocks(p: int, blocks: Sequence[float]) -> list[Step]:
    """The root sends rank 1 its block, then rank 2, ... (what MPI libraries do for Scatterv)."""
    return [_step([0], [r], blocks[r]) for r in range(1, p)]


def _allgather_ring_blocks(p: int, blocks: Sequence[float]) -> list[Step]:
    """Ring: in round k each rank ``r`` passes the block of rank ``r - k`` on to ``r + 1``, so a
    round lasts as long as its largest block (MPICH's Allgatherv for long messages)."""
    ranks = list(range(p))
    after = [(r + 1) % p for r in ranks]
    return [
        Step(ranks, after, [float(blocks[(r - k) % p]) for r in ranks], everyone=True) for k in range(p - 1)
    ]


def _allgather_bruck_blocks(p: int, blocks: Sequence[float]) -> list[Step]:
    """Bruck: in round k rank ``r`` sends the blocks of ranks ``r .. r + c - 1`` it holds,
    ``c = min(2**k, p - 2**k)``, to ``r - 2**k``."""
    ranks = list(range(p))
    steps = []
    for k in range(ceil_log2(p)):
        span = 1 << k
        count = min(span, p - span)
        sizes = [float(sum(blocks[(r + i) % p] for i in range(count))) for r in ranks]
        steps.append(Step(ranks, [(r - span) % p for r in ranks], sizes, everyone=True))
    return steps


def _allgather_recursive_doubling_blocks(p: int, blocks: Sequence[float]) -> list[Step]:
    """Recursive doubling (p a power of two, else Bruck): in round k rank ``r`` exchanges the
    blocks of its group of ``2**k`` ranks with the partner ``r xor 2**k``."""
    if p & (p - 1):
        return _allgather_bruck_blocks(p, blocks)
    ranks = list(range(p))
    steps = []
    for k in range(ceil_log2(p)):
        span = 1 << k
        sizes = [_subtree(blocks, r & ~(span - 1), span) for r in ranks]
        steps.append(Step(ranks, [r ^ span for r in ranks], sizes, everyone=True))
    return steps


def _alltoall_pairwise_blocks(p: int, rows: Sequence[Sequence[float]]) -> list[Step]:
    """Pairwise exchange: in round s each rank ``r`` sends its block for ``r + s`` (``rows[r]``)
    and receives from ``r - s``; a round lasts as long as its largest block.  MPI libraries run
    Alltoallv as this exchange (or as all sends posted at once), never as Bruck's algorithm,
    whose forwarding needs equal blocks: a machine's ``alltoall = "bruck"`` prices equal blocks
    only."""
    ranks = list(range(p))
    return [
        Step(ranks, [(r + s) % p for r in ranks], [float(rows[r][(r + s) % p]) for r in ranks], everyone=True)
        for s in range(1, p)
    ]


def _reduce_scatter_ring_blocks(p: int, blocks: Sequence[float]) -> list[Step]:
    """Ring: in round k rank ``r`` passes on its partial sum of the block rank ``r - k - 1``
    ends with and combines the one it received, so each ends with its own block of the sum
    (``MPI_Reduce_scatter`` with counts per rank); a round lasts as long as its largest block."""
    ranks = list(range(p))
    after = [(r + 1) % p for r in ranks]
    steps = []
    for k in range(p - 1):
        sizes = [float(blocks[(r - k - 1) % p]) for r in ranks]
        steps.append(Step(ranks, after, sizes, 1, max(sizes), True))
    return steps


def _reduce_scatter_halving_blocks(p: int, blocks: Sequence[float]) -> list[Step]:
    """Recursive halving (p a power of two, else the ring): in round k rank ``r`` sends the half
    of its group of ``p / 2**k`` blocks that its partner ``r xor p / 2**(k+1)`` keeps, and
    combines the half it keeps."""
    if p & (p - 1):
        return _reduce_scatter_ring_blocks(p, blocks)
    ranks = list(range(p))
    steps = []
    for k in range(p.bit_length() - 1):
        half = p >> (k + 1)
        # the partner's half of this rank's group: the blocks it keeps after the round
        sizes = [_subtree(blocks, (r ^ half) & ~(half - 1), half) for r in ranks]
        steps.append(Step(ranks, [r ^ half for r in ranks], sizes, 1, max(sizes), True))
    return steps


#: Per collective and algorithm, the schedule of blocks that differ per rank; an algorithm not
#: listed (alltoall's Bruck) runs as the first one.
BLOCK_ALGORITHMS: dict[str, dict[str, Callable[[int, Any], list[Step]]]] = {
    "gather": {"binomial": _binomial_gather_blocks, "linear": _linear_in_blocks},
    "scatter": {"binomial": _binomial_scatter_blocks, "linear": _linear_out_blocks},
    "allgather": {
        "ring": _allgather_ring_blocks,
        "bruck": _allgather_bruck_blocks,
        "recursive_doubling": _allgather_recursive_doubling_blocks,
    },
    "alltoall": {"pairwise": _alltoall_pairwise_blocks},
    "reduce_scatter": {
        "recursive_halving": _reduce_scatter_halving_blocks,
        "ring": _reduce_scatter_ring_blocks,
    },
}
#: Collectives whose ``size`` may differ per rank (and, for alltoall, per destination).
VARIABLE_BLOCKS = frozenset(BLOCK_ALGORITHMS)


def block_schedule(kind: str, algorithm: str, p: int, blocks: Blocks, root: int = 0) -> list[Step]:
    """The steps of ``algorithm`` for ``kind`` with per-rank ``blocks`` (real ranks), in real ranks.

    Rooted collectives are written for root 0: the blocks are taken in virtual order (virtual
    rank ``v`` is real rank ``(v + root) % p``) and the steps' ranks rotated back.
    """
    if p <= 1:
        return []
    table = BLOCK_ALGORITHMS[kind]
    build = table.get(algorithm) or next(iter(table.values()))
    shift = root % p
    virtual = blocks if shift == 0 else tuple(blocks[(v + shift) % p] for v in range(p))
    return _rotated(build(p, virtual), shift, p)


def mean_block(blocks: Blocks) -> float:
    """The mean bytes per block: what the ``auto`` rules read as the block size."""
    values = [x for row in blocks for x in row] if blocks and isinstance(blocks[0], tuple) else blocks
    return float(sum(values)) / max(len(values), 1)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Link classes and evaluation
# ---------------------------------------------------------------------------------------------


def _alpha_beta(lk: LinkLike) -> tuple[float, float]:
    """``(alpha, beta)`` of a link; an infinite bandwidth makes bytes free."""
    beta = 0.0 if lk.bandwidth == math.inf else 1.0 / float(lk.bandwidth)
    return float(lk.latency), beta


def _is_sized(lk: LinkLike) -> bool:
    """True when the link's cost is more than one line: pieces per size range, or a handshake."""
    return getattr(lk, "pieces", None) is not None or float(getattr(lk, "handshake", 0.0)) > 0.0


def link_time(lk: LinkLike, size: float, eager_limit: float) -> float:
    """Seconds of one ``size``-byte message on ``lk``: its piece's line, plus the handshake above
    ``eager_limit`` (the rendezvous protocol); a plain link gives ``transfer_time``."""
    pieces = getattr(lk, "pieces", None)
    if pieces is None:
        alpha, beta = _alpha_beta(lk)
    else:
        alpha, beta = lk.piece(size)  # type: ignore[attr-defined]
    handshake = float(getattr(lk, "handshake", 0.0))
    return alpha + size * beta + (handshake if size > eager_limit else 0.0)


def _link_times(lk: LinkLike, sizes: np.ndarray, eager_limit: float) -> np.ndarray:
    """:func:`link_time` of many sizes on one link at once."""
    import numpy as np

    pieces = getattr(lk, "pieces", None)
    if pieces is None:
        alpha, beta = _alpha_beta(lk)
        times = alpha + sizes * beta
    else:
        table = np.asarray(pieces, dtype=float)
        index = np.minimum(np.searchsorted(table[:, 0], sizes, side="left"), len(table) - 1)
        times = table[index, 1] + sizes * table[index, 2]
    handshake = float(getattr(lk, "handshake", 0.0))
    if handshake:
        times = times + np.where(sizes > eager_limit, handshake, 0.0)
    return times


class _PairCosts:
    """``(alpha, beta)`` of process pairs, asking ``link`` once per node pair.

    ``link(node_a, node_b)`` is the machine's link-class function; the answers are cached by
    node pair.  When the network is known to be two-level (``levels = (intra, inter)``: one
    class inside a node, one between nodes) the lookup is a comparison of nodes, vectorised
    for large schedules, which keeps 4096-process schedules with thousands of rounds (pairwise
    all-to-all) fast.  When a link is *sized* (pieces per message-size range, or a rendezvous
    handshake for transfers above ``eager_limit``) the transfers are priced by
    :func:`link_time` instead of one ``alpha + n * beta`` line.
    """

    def __init__(
        self,
        node_of: list[int],
        link: Callable[[int, int], LinkLike],
        levels: tuple[LinkLike, LinkLike] | None = None,
        eager_limit: float = math.inf,
        sized: bool | None = None,
        wakeup: list[float] | None = None,
    ):
        self.node_of = node_of
        #: per node: seconds a transfer to a process there adds (empty: none)
        self.wakeup = list(wakeup or [])
        self.link = link
        self.nnodes = max(node_of) + 1 if node_of else 1
        self._cache: dict[int, tuple[float, float]] = {}
        self._links: dict[int, LinkLike] = {}
        self._nodes_array: Any = None
        self.levels: tuple[tuple[float, float], tuple[float, float]] | None = None
        self.level_links = levels
        self.eager_limit = float(eager_limit)
        if levels is not None:
            self.levels = (_alpha_beta(levels[0]), _alpha_beta(levels[1]))
        if sized is None:  # the two classes, or the links of the first node to itself and to another
            used = sorted(set(node_of))[:2] or [0]
            probes = levels or (self.link_of(used[0], used[0]), self.link_of(used[0], used[-1]))
            sized = any(_is_sized(lk) for lk in probes)
        self.sized = sized or bool(self.wakeup)

    def pair(self, node_a: int, node_b: int) -> tuple[float, float]:
        key = node_a * self.nnodes + node_b
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = _alpha_beta(self.link_of(node_a, node_b))
        return hit

    def link_of(self, node_a: int, node_b: int) -> LinkLike:
        """The link class between two nodes (cached)."""
        if self.level_links is not None:
            return self.level_links[0] if node_a == node_b else self.level_links[1]
        key = node_a * self.nnodes + node_b
        hit = self._links.get(key)
        if hit is None:
            hit = self._links[key] = self.link(node_a, node_b)
        return hit

    def between(self, src: int, dst: int) -> tuple[float, float]:
        """``(alpha, beta)`` between two processes."""
        node_of = self.node_of
        na, nb = node_of[src], node_of[dst]
        if self.levels is not None:
            return self.levels[0] if na == nb else self.levels[1]
        return self.pair(na, nb)

    def time(self, src: int, dst: int, size: float) -> float:
        """Seconds of one transfer of ``size`` bytes between two processes (any link)."""
        node_of = self.node_of
        seconds = link_time(self.link_of(node_of[src], node_of[dst]), size, self.eager_limit)
        return seconds + self.wakeup[node_of[dst]] if self.wakeup else seconds

    def times(self, src: np.ndarray, dst: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """:meth:`time` of many transfers at once, one numpy evaluation per link class."""
        import numpy as np

        if self._nodes_array is None:
            self._nodes_array = np.asarray(self.node_of, dtype=np.int64)
        na = self._nodes_array[src]
        nb = self._nodes_array[dst]
        keys = na * self.nnodes + nb
        uniq, inverse = np.unique(keys, return_inverse=True)
        out = np.empty(len(sizes))
        for j, key in enumerate(uniq.tolist()):
            chosen = inverse == j
            lk = self.link_of(key // self.nnodes, key % self.nnodes)
            out[chosen] = _link_times(lk, sizes[chosen], self.eager_limit)
        if self.wakeup:
            out += np.asarray(self.wakeup)[nb]
        return out

    def arrays(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        if self._nodes_array is None:
            self._nodes_array = np.asarray(self.node_of, dtype=np.int64)
        na = self._nodes_array[src]
        nb = self._nodes_array[dst]
        if self.levels is not None:
            (a_in, b_in), (a_ex, b_ex) = self.levels
            same = na == nb
            return np.where(same, a_in, a_ex), np.where(same, b_in, b_ex)
        keys = na * self.nnodes + nb
        uniq, inverse = np.unique(keys, return_inverse=True)
        table = np.array([self.pair(int(k) // self.nnodes, int(k) % self.nnodes) for k in uniq])
        return table[inverse, 0], table[inverse, 1]


#: Transfers evaluated per numpy batch by :func:`finish_offsets` (bounds temporary memory).
_BATCH = 1 << 20

#: Schedules of at most this many transfers are evaluated in plain Python (no numpy import).
_PLAIN_LIMIT = 1 << 14


def finish_offsets(steps: list[Step], p: int, costs: _PairCosts, gamma: float = 0.0) -> list[float]:
    """Seconds after the common start at which each rank has done its last send or receive.

    A round lasts as long as its slowest transfer (times ``repeat``, plus the reduction work);
    each rank takes the end time of the last round it appears in.  Small schedules are added up
    in plain Python; large ones in numpy batches (the same arithmetic in the same order).
    """
    if sum(len(s.src) for s in steps) <= _PLAIN_LIMIT:
        return _finish_offsets_plain(steps, p, costs, gamma)
    return _finish_offsets_numpy(steps, p, costs, gamma).tolist()


def _finish_offsets_plain(steps: list[Step], p: int, costs: _PairCosts, gamma: float) -> list[float]:
    done = [0.0] * p
    between = costs.between
    sized = costs.sized
    time = costs.time
    total = 0.0
    for s in steps:
        nbytes = s.nbytes
        if sized:
            sizes = nbytes if isinstance(nbytes, list) else [nbytes] * len(s.src)
            slowest = max(map(time, s.src, s.dst, sizes))
        elif isinstance(nbytes, list):
            slowest = max(a + n * b for (a, b), n in zip(map(between, s.src, s.dst), nbytes, strict=True))
        else:
            slowest = max(a + nbytes * b for a, b in map(between, s.src, s.dst))
        total += float(s.repeat) * (slowest + gamma * s.reduce_bytes)
        end = 0.0 + total
        if s.everyone:
            done = [end] * p
        else:
            for r in s.src:
                done[r] = end
            for r in s.dst:
                done[r] = end
    return done


def _finish_offsets_numpy(steps: list[Step], p: int, costs: _PairCosts, gamma: float) -> np.ndarray:
    """:func:`finish_offsets` in numpy batches of concatenated rounds."""
    import numpy as np

    done = np.zeros(p)
    clock = 0.0
    i = 0
    while i < len(steps):
        j, total = i, 0
        while j < len(steps) and (j == i or total + len(steps[j].src) <= _BATCH):
            total += len(steps[j].src)
            j += 1
        batch = steps[i:j]
        i = j
        counts = np.fromiter((len(s.src) for s in batch), dtype=np.int64, count=len(batch))
        src = np.concatenate([np.asarray(s.src, dtype=np.int64) for s in batch])
        dst = np.concatenate([np.asarray(s.dst, dtype=np.int64) for s in batch])
        nbytes = np.concatenate(
            [np.broadcast_to(np.asarray(s.nbytes, dtype=float), (len(s.src),)) for s in batch]
        )
        if costs.sized:
            seconds = costs.times(src, dst, nbytes)
        else:
            alpha, beta = costs.arrays(src, dst)
            seconds = alpha + nbytes * beta
        firsts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        slowest = np.maximum.reduceat(seconds, firsts)
        reduce_bytes = np.fromiter((s.reduce_bytes for s in batch), dtype=float, count=len(batch))
        repeats = np.fromiter((s.repeat for s in batch), dtype=float, count=len(batch))
        ends = clock + np.cumsum(repeats * (slowest + gamma * reduce_bytes))
        clock = float(ends[-1])
        # rounds are in time order, so a rank's finish is the end of its last round; after a
        # round everybody takes part in, only the later rounds need per-rank bookkeeping
        first = 0
        for k in range(len(batch) - 1, -1, -1):
            if batch[k].everyone:
                done[:] = ends[k]
                first = k + 1
                break
        if first < len(batch):
            offset = int(firsts[first])
            last = np.full(p, -1, dtype=np.int64)
            order = np.repeat(np.arange(first, len(batch)), counts[first:])
            np.maximum.at(last, src[offset:], order)
            np.maximum.at(last, dst[offset:], order)
            seen = last >= 0
            done[seen] = ends[last[seen]]
    return done


def eager_limit_of(machine: Any) -> float:
    """The machine's eager limit in bytes (the runtime's default when the file sets none)."""
    limit = getattr(machine, "eager_limit", None)
    return float(DEFAULT_EAGER_LIMIT if limit is None else limit)


class CollectiveModel:
    """Completion times of collectives on one machine and placement, cached per call shape.

    ``node_of[pid]`` is the node each process runs on, ``link(a, b)`` the link class between
    two nodes, ``algorithms`` the machine's ``[collectives]`` choices (kind -> algorithm name
    or ``auto``), ``gamma`` the reduction time in seconds per byte (0 ignores the arithmetic
    of reductions; a machine's ``[collectives] reduce_cost``), ``overhead`` the seconds every
    rank spends per call beyond its messages (``[collectives] overhead``), ``eager_limit`` the
    size above which a transfer pays its link's rendezvous ``handshake`` (default: never; the
    machine's limit through :meth:`for_machine`), ``wakeup`` per node the seconds a transfer to
    a process there adds (the machine's ``wakeup`` on nodes running more processes than cores).
    Simulations call :meth:`offsets` once per collective; identical calls
    (same kind, root and size) hit a cache, so a collective inside a 10,000-iteration loop
    costs one schedule evaluation.
    """

    def __init__(
        self,
        node_of: list[int],
        link: Callable[[int, int], LinkLike],
        algorithms: Mapping[str, str] | None = None,
        gamma: float = 0.0,
        *,
        levels: tuple[LinkLike, LinkLike] | None = None,
        overhead: float = 0.0,
        eager_limit: float | None = None,
        wakeup: list[float] | None = None,
        gamma_ranges: tuple[tuple[float, float], ...] = (),
    ):
        self.node_of = [int(node) for node in node_of]
        self.p = len(self.node_of)
        self.algorithms = {k.lower(): str(v) for k, v in (algorithms or {}).items()}
        for kind, choice in self.algorithms.items():
            if kind in ALGORITHMS:
                resolve_algorithm(kind, choice, max(self.p, 1), 0.0)  # fail early on a typo
        self.gamma = float(gamma)
        #: ``(up_to, gamma)`` by the call's size (a machine's ``reduce_cost`` ranges: buffers that
        #: fit in a cache combine faster); empty: ``gamma`` for every size
        self.gamma_ranges = tuple(gamma_ranges)
        self.overhead = float(overhead)
        self.eager_limit = math.inf if eager_limit is None else float(eager_limit)
        self._costs = _PairCosts(self.node_of, link, levels, self.eager_limit, wakeup=wakeup)
        self._cache: dict[tuple[str, int, float], list[float]] = {}
        self._reductions: dict[tuple[str, int, float], list[float] | None] = {}
        self._block_cache: dict[tuple[str, int, Blocks], list[float]] = {}

    @classmethod
    def for_machine(cls, machine: Any, node_of: list[int], gamma: float = 0.0) -> CollectiveModel:
        """The model of a :class:`~uml2perf_runtime.platform.machine.Machine` and a placement.

        Uses the machine's ``[collectives]`` choices, and the fast two-level lookup when the
        machine's ``link`` is the standard intra-node/inter-node rule (a subclass that
        overrides ``link`` gets the general per-node-pair lookup).
        """
        link_levels = getattr(machine, "link_levels", None)
        levels = link_levels() if link_levels is not None else None
        ranges: tuple[tuple[float, float], ...] = (
            () if gamma else tuple(getattr(machine, "reduce_ranges", ()))
        )
        gamma = gamma or float(getattr(machine, "reduce_cost", 0.0))
        return cls(
            node_of,
            machine.link,
            getattr(machine, "collectives", None),
            gamma,
            levels=levels,
            overhead=float(getattr(machine, "collective_overhead", 0.0)),
            eager_limit=eager_limit_of(machine),
            wakeup=machine.crowded_wakeup(node_of) if hasattr(machine, "crowded_wakeup") else None,
            gamma_ranges=ranges,
        )

    def gamma_at(self, size: float) -> float:
        """Seconds per byte a reduction of a ``size``-byte call spends combining (its range's)."""
        for up_to, gamma in self.gamma_ranges:
            if size <= up_to:
                return gamma
        return self.gamma

    def algorithm(self, kind: str, size: float) -> str:
        """The algorithm name used for ``kind`` with ``size`` bytes on this machine."""
        return resolve_algorithm(kind, self.algorithms.get(kind), self.p, size)

    def offsets(self, kind: str, root: int, size: float) -> list[float]:
        """Per-rank completion offsets (seconds after the last process arrived)."""
        key = (kind, root, size)
        hit = self._cache.get(key)
        if hit is None:
            steps = schedule(kind, self.algorithm(kind, size), self.p, size, root)
            hit = finish_offsets(steps, self.p, self._costs, self.gamma_at(size))
            if self.overhead:
                hit = [x + self.overhead for x in hit]  # every rank pays the call's software overhead
            self._cache[key] = hit
        return hit

    def block_offsets(self, kind: str, root: int, blocks: Blocks) -> list[float]:
        """Per-rank completion offsets of a call whose blocks differ per rank (``MPI_Gatherv``...).

        ``blocks`` per rank: the bytes it contributes (gather, allgather) or receives (scatter),
        or for alltoall the row of bytes it sends to each rank.  The machine's algorithm for the
        kind, chosen by the mean block, runs with each transfer carrying its own bytes
        (:data:`BLOCK_ALGORITHMS`); identical calls hit a cache.
        """
        key = (kind, root, blocks)
        hit = self._block_cache.get(key)
        if hit is None:
            steps = block_schedule(kind, self.algorithm(kind, mean_block(blocks)), self.p, blocks, root)
            hit = finish_offsets(steps, self.p, self._costs, 0.0)
            if self.overhead:
                hit = [x + self.overhead for x in hit]
            self._block_cache[key] = hit
        return hit

    def reductions(self, kind: str, root: int, size: float) -> list[float] | None:
        """Per rank, the seconds of :meth:`offsets` that are the reduction's arithmetic.

        Combining the received bytes is work on the rank's core, not on the network: a
        simulation spends it there, so ranks that share a core also share that work.  ``None``
        when the call combines nothing (no ``gamma``, or a collective that does not reduce).
        """
        if not self.gamma and not any(g for _, g in self.gamma_ranges):
            return None
        key = (kind, root, size)
        if key in self._reductions:
            return self._reductions[key]
        steps = schedule(kind, self.algorithm(kind, size), self.p, size, root)
        hit: list[float] | None = None
        if any(s.reduce_bytes for s in steps):
            without = finish_offsets(steps, self.p, self._costs, 0.0)
            overhead = self.overhead
            hit = [
                max(0.0, t - (w + overhead))
                for t, w in zip(self.offsets(kind, root, size), without, strict=True)
            ]
        self._reductions[key] = hit
        return hit

    def duration(self, kind: str, root: int, size: float) -> float:
        """Time until the last rank finishes (the collective's critical path)."""
        return max(self.offsets(kind, root, size), default=0.0)
