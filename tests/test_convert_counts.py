"""Counts that ``convert`` reports, taken by shortcuts that must agree with the plain definitions.

``line_count`` counts newlines instead of splitting the generated module into lines, and
``timing_summary`` looks at each shared ``PerfSpec`` once; both must give exactly what the
straightforward versions give, whatever the text or the mix of specs.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from uml2perf.check import timing_summary
from uml2perf.cli import line_count
from uml2perf.errors import Location
from uml2perf.model import (
    COMMUNICATION_ROLES,
    Activity,
    Model,
    Node,
    NodeKind,
    Region,
    Role,
    StereotypeApplication,
    runs_as_action,
)
from uml2perf.profile import apply_profile

HERE = Location(file="t.uml")

#: characters that make line boundaries for ``str.splitlines``, and some that do not
_TEXT = st.text(alphabet=st.sampled_from(list('ab \n\r\t"é') + ["\x0b", "\x0c", "\x1c", "\x85", "\u2028"]))


@given(_TEXT)
def test_line_count_is_the_number_of_split_lines(text: str) -> None:
    assert line_count(text) == len(text.splitlines())


def test_line_count_of_a_generated_module_shape() -> None:
    text = '"""Doc."""\n\nE_A = rt.Element(0, "A", "action", "_a", 3)\n'
    assert line_count(text) == 3
    assert line_count(text.rstrip("\n")) == 3
    assert line_count("") == 0


def _reference_summary(model: Model) -> tuple[int, int, bool]:
    """The definition of :func:`timing_summary`, one node at a time."""

    def cost(perf):  # type: ignore[no-untyped-def]
        if perf is None:
            return None
        return perf.get("cost") or perf.get("time") or perf.get("flops") or perf.get("bytes")

    ids = frozenset(a.id for a in model.activities)
    actions = untimed = 0
    timed = False
    for act in model.activities:
        if act.perf is not None and cost(act.perf) is not None:
            timed = True
        for node in act.walk():
            perf = node.perf
            if perf is not None and (perf.role in COMMUNICATION_ROLES or cost(perf) is not None):
                timed = True
            if runs_as_action(node, ids) and (perf is None or perf.role == Role.ACTION):
                actions += 1
                untimed += cost(perf) is None
    return actions, untimed, timed


_APPLICATIONS = [
    (),
    (StereotypeApplication("action+", "uml2perf", (("cost", "2e-6"),)),),
    (StereotypeApplication("action+", "uml2perf", (("code", "x = 1"),)),),
    (StereotypeApplication("send+", "uml2perf", (("dest", "pid + 1"), ("size", "8"))),),
    (StereotypeApplication("action+", "uml2perf", (("flops", "1e6"),)),),
]


@given(st.lists(st.tuples(st.integers(0, len(_APPLICATIONS) - 1), st.booleans()), max_size=12))
def test_timing_summary_agrees_with_its_definition(picks: list[tuple[int, bool]]) -> None:
    nodes = tuple(
        Node(
            id=f"n{i}",
            name=f"N{i}",
            kind=NodeKind.ACTION if action else NodeKind.DECISION,
            uml_type="OpaqueAction" if action else "DecisionNode",
            location=HERE,
            stereotypes=_APPLICATIONS[pick],
        )
        for i, (pick, action) in enumerate(picks)
    )
    activity = Activity(id="act", name="act", location=HERE, region=Region(nodes=nodes))
    model = apply_profile(Model(source="t.uml", dialect="test", activities=(activity,)))
    assert timing_summary(model) == _reference_summary(model)
