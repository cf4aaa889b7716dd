"""The one identifier sanitiser of uml2perf.

Every name that travels from a model into generated code goes through here, so
that an element called ``class``, ``2nd step`` or ``A1; import os`` can only
ever become a plain identifier.  Names are *stable* (the same input gives the
same identifier on every run), *keyword-safe*, and *unique* inside one
:class:`Namer`: collisions get ``_2``, ``_3``... suffixes in the order names
are claimed, and callers claim in file order so the result is deterministic.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from collections.abc import Hashable, Iterable

_INVALID = re.compile(r"[^0-9A-Za-z_]+")
#: keywords and soft keywords (what ``keyword.iskeyword`` and ``keyword.issoftkeyword`` test), one set
_KEYWORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
_UNDERSCORES = re.compile(r"_{2,}")


def sanitise(name: str, *, fallback: str = "unnamed") -> str:
    """Turn arbitrary text into a valid, keyword-safe ASCII identifier.

    Accents are folded (``é`` → ``e``) so that names stay readable; any other
    character outside ``[0-9A-Za-z_]`` becomes ``_``.  A leading digit gets a
    ``_`` prefix and Python keywords (``class``, ``None``...) get a ``_``
    suffix.  Empty results fall back to ``fallback``.
    """
    if (
        name.isidentifier()
        and name.isascii()
        and "__" not in name
        and not name.startswith("_")
        and not name.endswith("_")
        and not keyword.iskeyword(name)
        and not keyword.issoftkeyword(name)
    ):
        return name  # already clean: the common case, kept fast
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    text = _UNDERSCORES.sub("_", _INVALID.sub("_", folded)).strip("_")
    if not text:
        text = fallback
    if text[0].isdigit():
        text = "_" + text
    if keyword.iskeyword(text) or keyword.issoftkeyword(text):
        text += "_"
    return text


def is_identifier(name: str) -> bool:
    """True when ``name`` can be used verbatim as a Python name (not a keyword)."""
    return name.isidentifier() and name.isascii() and not keyword.iskeyword(name)


class Namer:
    """Hands out unique identifiers inside one generated namespace.

    ``reserve`` blocks names the generated module itself uses (``rt``,
    ``MODEL``...).  ``claim(text, key)`` returns the sanitised identifier for
    ``key``; asking again with the same key returns the same identifier, so a
    handler can look names up wherever it needs them.
    """

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self._taken: set[str] = set(reserved)
        self._by_key: dict[Hashable, str] = {}

    def reserve(self, *names: str) -> None:
        """Mark names as used without binding them to a key."""
        self._taken.update(names)

    def claim(self, text: str, key: Hashable, *, prefix: str = "", fallback: str = "unnamed") -> str:
        """The unique identifier for ``key``, built from ``prefix + sanitise(text)``."""
        known = self._by_key.get(key)
        if known is not None:
            return known
        name = self._by_key[key] = self.unique(text, prefix=prefix, fallback=fallback)
        return name

    def unique(self, text: str, *, prefix: str = "", fallback: str = "unnamed") -> str:
        """A new identifier built from ``prefix + sanitise(text)``, bound to no key.

        For a caller that keeps its own table of what it named (the python handler names every
        element once, by its id: a large model has hundreds of thousands of them).
        """
        if (  # sanitise's fast case, inline: a large model claims one name per element
            text.isidentifier()
            and text.isascii()
            and "__" not in text
            and text[0] != "_"
            and text[-1] != "_"
            and text not in _KEYWORDS
        ):
            base = prefix + text
        else:
            base = prefix + sanitise(text, fallback=fallback) if prefix else sanitise(text, fallback=fallback)
            if prefix and not base.isidentifier():  # pragma: no cover - prefixes are identifiers
                base = sanitise(base)
        taken = self._taken
        if base in taken:
            counter = 2
            candidate = f"{base}_{counter}"
            while candidate in taken:
                counter += 1
                candidate = f"{base}_{counter}"
            base = candidate
        taken.add(base)
        return base

    def claim_exact(self, name: str, key: Hashable) -> bool:
        """Bind ``name`` itself to ``key``; False when it is taken by another key."""
        known = self._by_key.get(key)
        if known is not None:
            return known == name
        if name in self._taken:
            return False
        self._taken.add(name)
        self._by_key[key] = name
        return True

    def get(self, key: Hashable) -> str | None:
        return self._by_key.get(key)

    def mapping(self) -> dict[Hashable, str]:
        """Every key → identifier binding made so far (for reports and the json handler)."""
        return dict(self._by_key)
