"""One module per family of UML tool exports.

Each module defines a dialect object satisfying
:class:`~uml2perf.reader.dialects.base.Dialect`; the built-in ones are
registered under the entry-point group ``uml2perf.dialects`` in
``pyproject.toml`` and listed, in detection order, by
:data:`uml2perf.reader.registry.BUILTIN`.  A dialect of another package is
registered the same way (see :mod:`uml2perf.reader.registry`).
"""
