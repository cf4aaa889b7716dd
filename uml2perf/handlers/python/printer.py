"""Model expressions validated once and printed as Python for one generated module.

Names map as docs/architecture.md ("Generated module and runtime contract")
says: model variables to ``v.NAME``, system parameters to ``p.pid`` and so on,
cost functions to ``F(p, v, ...)``; the library names an expression uses are
recorded so the module imports them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from typing import Any

from ... import expressions as ex
from ...check import variable_name_error
from ...errors import Location, ModelError
from ...model import CostFunction, Variable


class ExpressionPrinter:
    """Validates model expressions once and prints them as Python for this module."""

    def __init__(self) -> None:
        self.ex = ex
        self.variables: dict[str, Variable] = {}
        self.functions: dict[str, CostFunction] = {}
        self.function_names: dict[str, str] = {}
        self.builtins_used: set[str] = set()
        self._parsed: dict[tuple[str, str], Any] = {}
        self._printed: dict[tuple[str, str, tuple[tuple[str, str], ...]], str] = {}
        self.rename: dict[str, str] = {n: f"p.{attr}" for n, attr in ex.SYSTEM_PARAMETERS.items()}

    def add_variable(self, variable: Variable, what: str) -> None:
        """Make ``variable`` known to expressions as ``v.NAME`` (its name checked by the checker's rule)."""
        problem = variable_name_error(variable, what)
        if problem is not None:
            raise problem
        name = variable.name
        self.variables.setdefault(name, variable)
        self.rename[name] = f"v.{name}"

    def parse(self, text: str, location: Location, what: str) -> Any:
        key = (text, what)
        found = self._parsed.get(key)
        if found is None:
            found = self.ex.parse_expression(text, location, what=what)
            self._parsed[key] = found
        return found

    def check(
        self,
        names: Iterable[str],
        calls: Iterable[str],
        text: str,
        location: Location,
        what: str,
        local: Iterable[str] = (),
    ) -> None:
        known_locals = set(local)
        for name in sorted(names):
            if name not in self.rename and name not in known_locals and name not in self.ex.CONSTANTS:
                raise ModelError(
                    f"{what} {text!r} uses {name!r},"
                    " which is neither a model variable nor a system parameter",
                    location,
                    hint="declare it as a global (an attribute of the main activity) or a local variable,"
                    " or use pid, nprocs, tid, nthreads, uid, node, nnodes, ppn",
                )
        for call in sorted(calls):
            if call in self.ex.BUILTIN_FUNCTIONS:
                self.builtins_used.add(call)
            elif call not in self.functions:
                raise ModelError(
                    f"{what} {text!r} calls {call}(), but no cost function of that name is defined",
                    location,
                    hint="define it as an OpaqueBehavior/FunctionBehavior with a body, or fix the name",
                )

    def note_constants(self, tree: ast.AST) -> None:
        """Record the library names (functions and constants) the module must import."""
        for item in ast.walk(tree):
            if isinstance(item, ast.Name) and (
                item.id in self.ex.CONSTANTS or item.id in self.ex.BUILTIN_FUNCTIONS
            ):
                self.builtins_used.add(item.id)

    def expr(self, text: str, location: Location, what: str, params: Mapping[str, str] | None = None) -> str:
        """Python for an expression text (validated, names mapped)."""
        key = (text, what, tuple(sorted(params.items())) if params else ())
        printed = self._printed.get(key)
        if printed is not None:
            return printed
        parsed = self.parse(text, location, what)
        self.check(parsed.names, parsed.calls, text, location, what, params or ())
        self.note_constants(parsed.tree)
        rename = self.rename if not params else {**self.rename, **params}
        printed = self.ex.to_python(parsed, rename, self.leading(), function_names=self.function_names)
        self._printed[key] = printed
        return printed

    def printed(self, text: str, what: str) -> str | None:
        """The Python :meth:`expr` printed for ``text`` already (without parameters), else None."""
        return self._printed.get((text, what, ()))

    def code(self, text: str, location: Location, indent: str) -> list[str]:
        """Python statements for a code fragment."""
        fragment = self.ex.parse_code(text, location)
        self.check(fragment.names, fragment.calls, text, location, "code fragment", ())
        self.note_constants(fragment.tree)
        printed = self.ex.to_python(
            fragment, self.rename, self.leading(), indent, function_names=self.function_names
        )
        return printed.split("\n")

    def remember(self, key: tuple[str, str, tuple[tuple[str, str], ...]], printed: str) -> None:
        """Keep a printed text for ``key`` (text, what, parameters), as :meth:`expr` would."""
        self._printed[key] = printed

    def leading(self) -> dict[str, tuple[str, ...]]:
        return {name: ("p", "v") for name in self.functions}
