"""Command lines that say "did you mean": argparse with suggestions for mistyped words.

argparse (Python 3.11) rejects ``uml2perf rnu`` or ``--procss 4`` with the list of what it
accepts, but does not point at the near miss.  :class:`SuggestingParser` adds it to every
"invalid choice" (subcommands, ``--placement``...), and :func:`parse_args` to every unrecognised
option, naming the option of the chosen subcommand that was probably meant::

    uml2perf run: error: unrecognized arguments: --procss (did you mean --procs?)

Used by ``uml2perf`` and by the command line of every generated module.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Sequence
from typing import NoReturn

#: argparse's message for a word that is not one of the choices; compiled when an error is reported.
_INVALID_CHOICE = r"invalid choice: '(?P<given>[^']*)' \(choose from (?P<choices>.*)\)"


def close_match(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate that looks most like ``word`` (a typo, a swapped letter, a prefix), or None."""
    import difflib  # only when something was mistyped

    pool = list(dict.fromkeys(candidates))
    found = difflib.get_close_matches(word, pool, n=1, cutoff=0.6)
    if found:
        return found[0]
    stem = word.lstrip("-")
    prefixed = [c for c in pool if stem and c.lstrip("-").startswith(stem)]  # stopped typing too early
    return prefixed[0] if len(prefixed) == 1 else None


class SuggestingParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose "invalid choice" errors name the closest choice.

    Subparsers made with ``add_subparsers()`` are of the same class.
    """

    def error(self, message: str) -> NoReturn:
        found = re.search(_INVALID_CHOICE, message)
        if found:
            choices = re.findall(r"'([^']*)'", found.group("choices"))
            best = close_match(found.group("given"), choices)
            if best is not None:
                cut = found.start("choices") - len(" (choose from ")
                message = f"{message[:cut]}, did you mean {best!r}?{message[cut:]}"
        super().error(message)


def option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """Every option string (``--procs``, ``-q``) of ``parser``."""
    return [option for action in parser._actions for option in action.option_strings]


def subcommand_parser(
    parser: argparse.ArgumentParser, namespace: argparse.Namespace
) -> argparse.ArgumentParser:
    """The parser of the subcommand ``namespace`` was parsed with (``parser`` itself when none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = getattr(namespace, action.dest or "", None)
            if chosen in action.choices:
                return subcommand_parser(action.choices[chosen], namespace)
    return parser


def parse_args(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> argparse.Namespace:
    """``parser.parse_args(argv)``, with "did you mean" for each unrecognised option.

    The error comes from the subcommand's parser, so its usage line is the one shown.
    """
    namespace, extras = parser.parse_known_args(argv)
    if extras:
        target = subcommand_parser(parser, namespace)
        known = option_strings(target)
        shown = []
        for word in extras:
            best = close_match(word.partition("=")[0], known) if word.startswith("-") else None
            shown.append(f"{word} (did you mean {best}?)" if best else word)
        target.error("unrecognized arguments: " + " ".join(shown))
    return namespace


__all__ = ["SuggestingParser", "close_match", "option_strings", "parse_args"]
