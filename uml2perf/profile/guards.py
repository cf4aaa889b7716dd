"""Guards as people write them: expressions, probabilities and prose, read once per flow.

A guard on a flow is one of:

* an **expression** over known names (model variables, names assigned by code
  fragments, system parameters): ``GV == 1``, OCL ``GV = 1``, ``pid < nprocs/2``;
* **else** (``else``, ``otherwise``);
* a **probability**: ``prob:0.7``, ``p=0.3``, ``probability = 0.25``, ``70%``,
  ``p(0.7)`` (a decimal comma is accepted: ``p=0,3``);
* **prose** (informal): anything that does not parse (``idea(s) available``,
  ``données valides``), or parses but reads no known name (``Yes``, ``not
  valid``, ``да``).  Prose may carry a probability of its own (``yes (70%)``,
  ``hit, p=0.9``).

A guard that reads known *and* unknown names (``GV == limit`` where only ``GV``
is a variable) is a mistyped expression and stays an error, with "did you
mean"; so is text that does not parse but uses an operator and a known name
(``GV => 1``).

:func:`resolve_choices` turns the readings of the flows leaving one node into
the ``guard``/``probability`` fields of :class:`~uml2perf.model.Edge` that
control-flow recovery and the handlers read (docs/profile.md, "Guards as
drawn", states the rules).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from ..errors import Diagnostic, Location, Severity, Uml2PerfError
from ..expressions import means_else
from ..model import Edge, NodeKind

if TYPE_CHECKING:  # pragma: no cover
    from fractions import Fraction  # imported where used: most models have no probability to add up

__all__ = [
    "GuardKind",
    "GuardReading",
    "did_you_mean",
    "read_guard",
    "resolve_choices",
]


class GuardKind(StrEnum):
    EXPRESSION = "expression"
    ELSE = "else"
    PROBABILITY = "probability"
    PROSE = "prose"
    MISTYPED = "mistyped"  # known and unknown names together, or a broken expression over known names


@dataclass(frozen=True, slots=True)
class GuardReading:
    """How one guard text was read.

    ``probability`` is a number in [0, 1] as text (``"0.7"``) for
    :attr:`GuardKind.PROBABILITY`, and for prose that carries one.
    ``unknown`` lists the names that are not model variables, ``suggestions``
    the known names they resemble (``(unknown, known)``).  ``problem`` says
    what is wrong with a mistyped guard, or why a probability was ignored.
    """

    kind: GuardKind
    text: str
    probability: str | None = None
    names: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    suggestions: tuple[tuple[str, str], ...] = ()
    problem: str | None = None

    @property
    def informal(self) -> bool:
        return self.kind is GuardKind.PROSE or self.kind is GuardKind.PROBABILITY

    def describe(self) -> str:
        """How the guard was read, for ``check -v``."""
        if self.kind is GuardKind.EXPRESSION:
            over = ", ".join(self.names)
            return "an expression over " + over if over else "a constant expression"
        if self.kind is GuardKind.ELSE:
            return "else"
        if self.kind is GuardKind.PROBABILITY:
            return f"the probability {self.probability}"
        if self.kind is GuardKind.PROSE:
            return "prose" + (f" with the probability {self.probability}" if self.probability else "")
        return "a mistyped expression"


# --------------------------------------------------------------------------- probabilities in text

_NUM = r"(\d+(?:[.,]\d+)?|[.,]\d+)"
_PROB_WORD = (
    r"(?:p|pr|prob|proba|probability|probabilit[éey]|probabilidad|probabilità"
    r"|wahrscheinlichkeit|вероятность|вер)"
)
# The patterns are compiled by ``re`` when first used (``re`` keeps them): a model without guard
# text never needs them, and compiling them at import cost about 1 ms of every ``convert``.
#: ``p=0.3``, ``prob: 0.7``, ``probability = 25%``, ``p(0.7)``, ``p 0.3`` -- the whole text
_WHOLE_KEYED = rf"(?i)^{_PROB_WORD}\s*(?:==|[:=]|\(|\s)\s*{_NUM}\s*(%)?\s*\)?$"
#: ``70%``, ``70 %``
_WHOLE_PERCENT = rf"^{_NUM}\s*%$"
#: a probability inside prose: ``yes (70%)``, ``hit, p=0.9``, ``[no: 30 %]``
_EMBEDDED = rf"(?i)(?:(?<![\w.,]){_PROB_WORD}\s*(?:==|[:=])\s*{_NUM}\s*(%)?|(?<![\w.,]){_NUM}\s*%)"
_WORD = r"\w+"
#: Names tools give flows by themselves (``ControlFlow1``, ``flow_3``, ``Transition``): labels, never guards.
_TOOL_NAME = r"(?i)^(?:control|object|activity)?[ _-]?(?:flow|edge|transition)[ _-]?\d*$"
_OPERATOR = r"==|!=|<>|<=|>=|[<>=+*/&|]"


def _number(text: str, percent: bool) -> Fraction:
    from fractions import Fraction

    value = Fraction(text.replace(",", "."))
    return value / 100 if percent else value


def _shown(value: Fraction) -> str:
    """A probability as short text: ``0.7``, ``0.25``, ``1/3``."""
    from fractions import Fraction

    if value.denominator == 1:
        return str(value.numerator)
    den = value.denominator
    while den % 2 == 0:
        den //= 2
    while den % 5 == 0:
        den //= 5
    if den == 1:
        text = format(value.numerator / value.denominator, ".15g")
        if Fraction(text) == value:
            return text
    return f"{value.numerator}/{value.denominator}"


def _whole_probability(text: str) -> Fraction | None:
    match = re.match(_WHOLE_KEYED, text)
    if match is not None:
        return _number(match.group(1), bool(match.group(2)))
    match = re.match(_WHOLE_PERCENT, text)
    if match is not None:
        return _number(match.group(1), True)
    return None


def probability_value(text: str) -> str:
    """A probability as a tag value gives it: ``70%``, ``p=0.3``, ``0.3``, VSL ``(expr=1-$p)``.

    Raises :class:`ValueError` for a number outside [0, 1] or an empty value.
    """
    from .marte import parse_vsl_real

    whole = _whole_probability(text.strip())
    if whole is None:
        value = parse_vsl_real(text)
        try:
            number = float(value)
        except ValueError:
            return value  # an expression: checked when it is evaluated
        if not (math.isfinite(number) and 0 <= number <= 1):
            raise ValueError(f"{value} is not a probability between 0 and 1")
        return value
    if not 0 <= whole <= 1:
        raise ValueError(f"{_shown(whole)} is not a probability between 0 and 1")
    return _shown(whole)


def _embedded_probability(text: str) -> Fraction | None:
    """The one probability written inside prose; ``None`` when there is none or more than one."""
    found = re.findall(_EMBEDDED, text)
    if len(found) != 1:
        return None
    keyed, keyed_percent, bare = found[0]
    return _number(keyed, bool(keyed_percent)) if keyed else _number(bare, True)


# --------------------------------------------------------------------------- one guard


def did_you_mean(name: str, known: Collection[str]) -> str | None:
    """The known name ``name`` most resembles (same letters in another case, or a close spelling)."""
    import difflib

    folded = name.casefold()
    for candidate in sorted(known):
        if candidate.casefold() == folded:
            return candidate
    close = difflib.get_close_matches(name, sorted(known), 1, 0.75)
    return close[0] if close else None


def _strip_brackets(text: str) -> str:
    text = text.strip()
    while len(text) >= 2 and text[0] == "[" and text[-1] == "]" and "[" not in text[1:-1]:
        text = text[1:-1].strip()
    return text


def read_guard(
    text: str,
    known: Collection[str],
    functions: Collection[str] = (),
) -> GuardReading | None:
    """Classify one guard text; ``None`` for an empty guard.

    ``known`` holds the model's variables, names assigned by its code
    fragments and the system parameters; ``functions`` the model's cost
    functions.  Never raises for any text: what the expression language
    refuses is prose or a mistyped expression.
    """
    from ..expressions import BUILTIN_FUNCTIONS, parse_expression

    body = _strip_brackets(text)
    if not body:
        return None
    if means_else(body):
        return GuardReading(GuardKind.ELSE, body)
    try:
        expression = parse_expression(body, what="guard")
    except Uml2PerfError as exc:
        return _unparsed(body, known, exc.message)
    names = tuple(sorted(expression.names))
    calls = expression.calls
    unknown_calls = sorted(c for c in calls if c not in functions and c not in BUILTIN_FUNCTIONS)
    unknown = tuple(n for n in names if n not in known)
    if not unknown and not unknown_calls:
        return GuardReading(GuardKind.EXPRESSION, body, names=names)
    if len(unknown) < len(names):
        suggestions = tuple((n, s) for n in unknown if (s := did_you_mean(n, known)) is not None)
        return GuardReading(
            GuardKind.MISTYPED,
            body,
            names=names,
            unknown=unknown,
            suggestions=suggestions,
            problem="uses model variable(s) "
            + ", ".join(n for n in names if n in known)
            + " with unknown name(s) "
            + ", ".join(unknown),
        )
    return _informal(body, names, unknown + tuple(unknown_calls), _prose_suggestions(unknown, known))


def _prose_suggestions(words: Iterable[str], known: Collection[str]) -> tuple[tuple[str, str], ...]:
    """Model variables that words of a prose guard resemble (system parameters would only be noise)."""
    from ..expressions import SYSTEM_PARAMETERS

    variables = [k for k in known if k not in SYSTEM_PARAMETERS]
    return tuple((w, s) for w in words if len(w) > 2 and (s := did_you_mean(w, variables)) is not None)


def _unparsed(body: str, known: Collection[str], error: str) -> GuardReading:
    words = tuple(dict.fromkeys(re.findall(_WORD, body)))
    used = [w for w in words if w in known]
    if used and _whole_probability(body) is None and re.search(_OPERATOR, body):
        return GuardReading(
            GuardKind.MISTYPED,
            body,
            names=tuple(used),
            unknown=tuple(w for w in words if w not in known and not w[0].isdigit()),
            problem="reads model variable(s) "
            + ", ".join(used)
            + " but does not parse: "
            + error.removeprefix(f"guard {body!r}: "),
        )
    unknown = tuple(w for w in words if not w[0].isdigit() and w not in known)
    return _informal(body, (), unknown, _prose_suggestions(unknown, known))


def _informal(
    body: str, names: tuple[str, ...], unknown: tuple[str, ...], suggestions: tuple[tuple[str, str], ...]
) -> GuardReading:
    whole = _whole_probability(body)
    if whole is not None:
        if 0 <= whole <= 1:
            return GuardReading(GuardKind.PROBABILITY, body, _shown(whole))
        return GuardReading(
            GuardKind.PROSE,
            body,
            unknown=unknown,
            problem=f"{_shown(whole)} is not a probability between 0 and 1",
        )
    embedded = _embedded_probability(body)
    problem = None
    if embedded is not None and not 0 <= embedded <= 1:
        problem = f"{_shown(embedded)} is not a probability between 0 and 1"
        embedded = None
    return GuardReading(
        GuardKind.PROSE,
        body,
        _shown(embedded) if embedded is not None else None,
        names=names,
        unknown=unknown,
        suggestions=suggestions,
        problem=problem,
    )


def name_as_guard(
    name: str, known: Collection[str], functions: Collection[str], *, from_decision: bool
) -> GuardReading | None:
    """How a flow's name reads when the flow has no guard; ``None`` when it is just a label.

    A bracketed name (``[yes]``) is guard text whatever it says; otherwise a
    name counts when it is a probability, ``else``, or an expression over known
    names, and, on a flow leaving a decision, when it is short prose (the
    label is then the branch's only description).
    """
    text = name.strip()
    if not text:
        return None
    bracketed = text.startswith("[") and text.endswith("]")
    if not bracketed and re.match(_TOOL_NAME, text):
        return None
    reading = read_guard(text, known, functions)
    if reading is None or bracketed:
        return reading
    if reading.kind is GuardKind.PROBABILITY or reading.kind is GuardKind.ELSE:
        return reading
    if reading.kind is GuardKind.EXPRESSION and reading.names:
        return reading
    if reading.kind is GuardKind.PROSE and from_decision:
        return reading
    return None


# --------------------------------------------------------------------------- one decision


@dataclass(frozen=True, slots=True)
class Choice:
    """How the flows leaving one node were read: new flows and what to tell the user."""

    edges: dict[str, Edge]
    diagnostics: list[Diagnostic]


def _constant(text: str) -> Fraction | None:
    from fractions import Fraction

    from ..expressions import constant_value, is_constant, parse_expression

    try:
        expression = parse_expression(text, what="probability")
        if not is_constant(expression):
            return None
        value = constant_value(expression)
    except Uml2PerfError:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return Fraction(str(value)) if isinstance(value, float) else Fraction(value)
    except (ValueError, OverflowError):
        return None


def _flow_label(edge: Edge) -> str:
    return repr(edge.name) if edge.name else f"(xmi:id={edge.id})"


_SIMPLE_SHARE = r"^[\d./]+$"


def _fix_hint(edge: Edge, share: str, example_names: Sequence[str]) -> str:
    over = example_names[0] if example_names else "x"
    if not re.match(_SIMPLE_SHARE, share):
        share = "0.3"
    return (
        "give the flow its probability in a --sidecar file "
        f'([elements."{edge.id}"] probability = "{share}"), '
        f"or write the guard as an expression over a model variable ([{over} == 1])"
    )


def resolve_choices(
    source_kind: NodeKind | None,
    source_name: str,
    source_location: Location,
    outgoing: Sequence[Edge],
    read: Callable[[Edge], tuple[GuardReading | None, str]],
    example_names: Sequence[str] = ("x",),
) -> Choice:
    """Read the guards of the flows leaving one node and settle how its branch is chosen.

    ``read(edge)`` gives an edge's reading and where the text came from
    (``"guard"`` or ``"name"``).  The rules (docs/profile.md, "Guards as
    drawn"):

    * expressions over known names are tested first, in file order;
    * when any guard is informal (prose or a probability), the flows with
      informal guards, with probabilities, without guards, and the ``else``
      flow form one random choice: each takes its given probability (sidecar
      ``probability``, MARTE ``prob``, the guard's own ``p=0.3``), the rest is
      shared equally among the others; the ``else`` flow keeps its guard and
      takes its share as the last branch;
    * constant probabilities that add up to more than 1 (or, when every
      branch has one, to anything but 1) are scaled to add up to 1, with a
      warning;
    * a node with a single outgoing flow whose guard is informal always takes it.
    """
    from fractions import Fraction

    diagnostics: list[Diagnostic] = []
    readings: dict[str, tuple[GuardReading | None, str]] = {e.id: read(e) for e in outgoing}
    result: dict[str, Edge] = {}
    where = f"decision {source_name!r}" if source_kind is NodeKind.DECISION else f"{source_name!r}"
    for edge in outgoing:
        reading, origin = readings[edge.id]
        if reading is None:
            continue
        if reading.kind is GuardKind.MISTYPED:
            mean = "; ".join(f"did you mean {known!r} for {name!r}?" for name, known in reading.suggestions)
            fix = (
                "declare the name as a variable (an attribute of the main activity, or [variables] "
                "in a --sidecar file) or correct it"
                if reading.problem and reading.problem.startswith("uses")
                else "correct the expression (x > 1, x == 1, x <> 1)"
            )
            diagnostics.append(
                Diagnostic(
                    Severity.ERROR,
                    f"{origin} {reading.text!r} {reading.problem}",
                    edge.location,
                    (mean + " " if mean else "") + fix + "; a guard in prose must use no model variable",
                    "mistyped-guard",
                ),
            )
        elif reading.kind is GuardKind.PROSE and reading.problem:
            diagnostics.append(
                Diagnostic(
                    Severity.WARNING,
                    f"{origin} {reading.text!r}: {reading.problem}; it is ignored",
                    edge.location,
                    "write a probability as p=0.3 or 30%",
                    "bad-probability",
                )
            )
    for edge in outgoing:
        reading, origin = readings[edge.id]
        if reading is not None and not reading.informal and origin == "name" and edge.guard is None:
            # guard text left in the flow's name: it becomes the guard
            guard = "else" if reading.kind is GuardKind.ELSE else reading.text
            result[edge.id] = edge.replace(guard=guard)
            if reading.kind is not GuardKind.MISTYPED:
                diagnostics.append(_reading_note(edge, reading, origin))
    informal = [e for e in outgoing if (r := readings[e.id][0]) is not None and r.informal]
    if not informal and not _chosen_by_probabilities(source_kind, outgoing, readings):
        return Choice(result, diagnostics)  # guards read as expressions or else: check -v lists them
    bare = [e for e in outgoing if readings[e.id][0] is None and e.guard is None and e.probability is None]
    if len(outgoing) == 1 or (source_kind is not NodeKind.DECISION and bare):
        # the only flow, or one of flows that all run together (an action's unguarded flows fork)
        why = (
            f"it is the only flow leaving {where}"
            if len(outgoing) == 1
            else f"{where} is not a decision and its unguarded flows all run together"
        )
        for edge in informal:
            reading, origin = readings[edge.id]
            assert reading is not None
            result[edge.id] = edge.replace(guard=None)
            diagnostics.append(
                Diagnostic(
                    Severity.WARNING,
                    f"{origin} {reading.text!r} is {reading.describe()}, not an expression over model "
                    f"variables; {why}, so the flow is always taken",
                    edge.location,
                    f"write the guard as an expression over a model variable ([{example_names[0]} == 1]) "
                    "to make it conditional, or remove it",
                    "prose-guard",
                )
            )
        return Choice(result, diagnostics)
    formal: list[Edge] = []
    random: list[Edge] = []
    otherwise: Edge | None = None
    for edge in outgoing:
        reading, _origin = readings[edge.id]
        if reading is not None and reading.kind is GuardKind.ELSE and otherwise is None:
            otherwise = edge
        elif reading is not None and reading.kind in (GuardKind.EXPRESSION, GuardKind.MISTYPED):
            formal.append(edge)
        else:
            random.append(edge)
    given: dict[str, str] = {}
    for edge in random:
        reading, _origin = readings[edge.id]
        if edge.probability is not None:
            given[edge.id] = edge.probability
        elif reading is not None and reading.probability is not None:
            given[edge.id] = reading.probability
    unspecified = [e for e in random if e.id not in given]
    sharers = len(unspecified) + (otherwise is not None)
    constants = {k: _constant(v) for k, v in given.items()}
    shares: dict[str, str] = dict(given)
    rest_text: str | None = None
    if all(v is not None for v in constants.values()):
        total = sum((v for v in constants.values() if v is not None), Fraction(0))
        scale_note = None
        if total > 1 or (sharers == 0 and total != 1 and total > 0):
            scale_note = f"the probabilities of the flows leaving {where} add up to {_shown(total)}, not 1"
            for key, value in constants.items():
                assert value is not None
                shares[key] = _shown(value / total)
            total = Fraction(1)
        if sharers:
            rest = (1 - total) / sharers
            rest_text = _shown(rest)
            if rest == 0:
                scale_note = (scale_note + "; " if scale_note else "") + (
                    f"the flows leaving {where} without a probability are never taken"
                )
        if scale_note is not None:
            diagnostics.append(
                Diagnostic(
                    Severity.WARNING,
                    scale_note + ("; they are scaled to add up to 1" if total == 1 and given else ""),
                    source_location,
                    "give the outgoing flows probabilities that add up to 1",
                    "probability-sum",
                )
            )
    elif sharers:
        rest_text = "(1 - (" + ") - (".join(given.values()) + f")) / {sharers}"
    for edge in unspecified:
        assert rest_text is not None
        shares[edge.id] = rest_text
    mixed = bool(formal)
    for edge in random:
        share = shares[edge.id]
        result[edge.id] = edge.replace(guard=None, probability=share)
        reading, origin = readings[edge.id]
        if reading is None:
            continue
        if reading.kind is GuardKind.PROBABILITY and edge.probability is None:
            diagnostics.append(_reading_note(edge, reading, origin))
            continue
        if reading.kind is GuardKind.PROBABILITY:
            continue  # a probability given twice: the sidecar's or the stereotype's wins, silently
        when = " when no other guard holds" if mixed else ""
        why = (
            "it does not parse as an expression"
            if not reading.names
            else "none of its names (" + ", ".join(reading.names) + ") is a model variable"
        )
        mean = "".join(f"; did you mean {known!r} for {name!r}?" for name, known in reading.suggestions)
        # a branch whose probability was given, or is what the given ones leave, is settled: a note
        settled = edge.id in given or (bool(given) and sharers == 1)
        diagnostics.append(
            Diagnostic(
                Severity.INFO if settled else Severity.WARNING,
                f"{origin} {reading.text!r} is prose ({why}): {where} chooses at random{when}, "
                f"this branch with probability {share}"
                + (" (given)" if edge.id in given else " (what the given ones leave)" if settled else ""),
                edge.location,
                None if settled else _fix_hint(edge, share, example_names) + mean,
                "prose-guard",
            )
        )
    if otherwise is not None and rest_text is not None:
        diagnostics.append(
            Diagnostic(
                Severity.INFO,
                f"[else] of {where} is one branch of its random choice, with probability {rest_text}",
                otherwise.location,
                code="guard-reading",
            )
        )
    return Choice(result, diagnostics)


def _chosen_by_probabilities(
    source_kind: NodeKind | None,
    outgoing: Sequence[Edge],
    readings: dict[str, tuple[GuardReading | None, str]],
) -> bool:
    """A decision whose flows carry probabilities and no guard expression: settled like an informal one.

    Its unguarded flows then share what the probabilities leave (instead of
    never being taken) and constant probabilities are checked to add up to 1.
    """
    if source_kind is not NodeKind.DECISION or len(outgoing) < 2:
        return False
    if any(
        r is not None and r.kind in (GuardKind.EXPRESSION, GuardKind.MISTYPED) for r, _ in readings.values()
    ):
        return False
    return any(e.probability is not None for e in outgoing)


def _reading_note(edge: Edge, reading: GuardReading, origin: str) -> Diagnostic:
    source = "name" if origin == "name" else "guard"
    return Diagnostic(
        Severity.INFO,
        f"{source} {reading.text!r} of flow {_flow_label(edge)} read as {reading.describe()}",
        edge.location,
        code="guard-reading",
    )


def known_names(names: Iterable[str]) -> frozenset[str]:
    """Model variable names together with the system parameters: what a formal guard may read."""
    from ..expressions import SYSTEM_PARAMETERS

    return frozenset(names) | frozenset(SYSTEM_PARAMETERS)
