"""uml2perf: predict the performance of parallel programs from UML activity diagrams.

The package is organised by stage: :mod:`uml2perf.reader` (XMI dialects),
:mod:`uml2perf.model` (the neutral model), :mod:`uml2perf.profile`
(performance annotations), :mod:`uml2perf.expressions` (the safe expression
language), :mod:`uml2perf.navigation` (control-flow recovery, Navigator and
Traverser), :mod:`uml2perf.handlers` (content handlers), :mod:`uml2perf.generation`,
and the commands: :mod:`uml2perf.cli`, :mod:`uml2perf.commands` and
:mod:`uml2perf.api`.  The estimator that generated models import is the
separate package ``uml2perf_runtime``.
"""

__version__ = "0.1.0"
