"""The uml2perf profile: role stereotypes, their tags, and the words that mark a main activity or an else."""

from __future__ import annotations

import re

from uml2perf_runtime.operations.registry import OPERATIONS

from ..model import (
    Role,
    normalise_name,
)

# --------------------------------------------------------------------------- the uml2perf profile

METADATA_TAGS = ("id", "type")

#: normalised stereotype name -> (role, tags it accepts)
ROLES: dict[str, tuple[Role, tuple[str, ...]]] = {
    "action+": (
        Role.ACTION,
        (
            "cost",
            "repeat",
            "code",
            "flops",
            "bytes",
            "footprint",
            "fresh",
            "allocation",
            "calls",
            "operations",
            "device",
            "copyin",
            "copyout",
            "threads",
        )
        + METADATA_TAGS,
    ),
    "activity+": (Role.ACTIVITY, ("repeat", "cost") + METADATA_TAGS),
    # the communication operations: stereotype and tags from the runtime's table of operations
    # keyed by the normalised name, as lookups are (``reduce_scatter+`` is ``reducescatter+``)
    **{normalise_name(op.stereotype): (Role(op.name), op.tags + METADATA_TAGS) for op in OPERATIONS.values()},
    "parallel+": (Role.PARALLEL, ("threads",) + METADATA_TAGS),
    "critical+": (Role.CRITICAL, ("name",) + METADATA_TAGS),
    "loop+": (Role.LOOP, ("iterations", "while", "counter") + METADATA_TAGS),
    "clause+": (Role.ACTION, ("guard", "probability", "cost", "repeat", "code") + METADATA_TAGS),
    "pipeline+": (Role.PIPELINE, ("items", "overhead", "startup", "handoff", "ordered") + METADATA_TAGS),
    "taskpool+": (Role.TASKPOOL, ("threads", "items", "overhead", "startup", "handoff") + METADATA_TAGS),
}
# a receive may name the model variable that takes the source it matched (``sender = "W"``)
for _receive in ("recv+", "irecv+", "sendrecv+"):
    _role, _tags = ROLES[_receive]
    ROLES[_receive] = (_role, _tags + ("sender",))
#: Tags of a receive that name a variable it sets rather than an expression it reads.
SENDER_TAG = "sender"
#: The name an ``alltoall+``'s ``size`` may read for the rank each block goes to
#: (``MPI_Alltoallv``): the size is then one expression per destination, on the sending rank.
PEER_NAME = "dest"
#: The operations and tags that may read :data:`PEER_NAME`.
PEER_TAGS = frozenset({("alltoall", "size")})
#: ``clause+`` adds a condition to whatever role the action has (see ``_Interpreter.own_spec``).
CLAUSE_ENTRY = ROLES["clause+"]
#: Tags ``clause+`` contributes to the role stereotype it sits beside.
CLAUSE_TAGS = ("guard", "probability")
_ROLE_CACHE: dict[str, tuple[Role, tuple[str, ...]] | None] = {}
_TAG_CACHE: dict[str, str] = {}


def role_of(stereotype: str) -> tuple[Role, tuple[str, ...]] | None:
    """``(role, known tags)`` of a stereotype name as written, or ``None``; memoised per spelling."""
    try:
        return _ROLE_CACHE[stereotype]
    except KeyError:
        entry = _ROLE_CACHE[stereotype] = ROLES.get(normalise_name(stereotype))
        return entry


def tag_key(tag: str) -> str:
    """The normalised tag name with synonyms applied (``Time`` -> ``cost``); memoised per spelling."""
    try:
        return _TAG_CACHE[tag]
    except KeyError:
        key = normalise_name(tag)
        key = _TAG_CACHE[tag] = TAG_SYNONYMS.get(key, key)
        return key


#: role -> the tags it accepts (``action+``'s for ACTION: ``clause+`` shares the role, not its tags)
ROLE_TAGS: dict[Role, tuple[str, ...]] = {role: tags for role, tags in reversed(ROLES.values())}
#: Tag synonyms, by normalised name.
TAG_SYNONYMS = {"time": "cost", "condition": "guard", "prob": "probability"}
#: Stereotypes that make an activity the main one.
MAIN_STEREOTYPES = frozenset({"main", "model+"})
#: Characters that make a guard an attempted expression rather than prose.
OPERATOR_CHARACTERS = re.compile(r"[=<>!+*/%()&|^~\-]")
#: Tags on a flow that give its branch probability.
PROBABILITY_TAGS = frozenset({"probability", "prob"})
