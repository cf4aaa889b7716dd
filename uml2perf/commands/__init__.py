"""The subcommands of ``uml2perf`` beyond the core ones in :mod:`uml2perf.cli`.

Each module here adds one subcommand to the parser and holds what turns its
options into a call of the library module that does the work (``sweep``,
``fit``, ``calibrate``, ``compare``).  These modules import only the standard
library and :mod:`uml2perf.commands.common` at the top, so building the parser
costs nothing; the library module is imported when its subcommand runs.
:mod:`uml2perf.commands.common` holds what every subcommand shares: exit
statuses, ``--set`` and ``--limit`` parsing, and printing of untrusted text.
"""
