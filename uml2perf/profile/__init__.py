"""The performance profile: stereotypes, MARTE and the TOML sidecar, interpreted once.

The reader leaves stereotype applications as written.  :func:`apply_profile`
turns them into a :class:`~uml2perf.model.PerfSpec` per node and activity,
so later stages never look at raw stereotype names:

* the uml2perf profile (README.md, "The performance profile in brief"): ``action+``, ``activity+``, the
  communication stereotypes, ``parallel+``, ``critical+``, ``loop+``,
  ``pipeline+``, ``taskpool+``; ``main``/``model+`` mark the main activity.
  ``clause+`` (``guard``, synonym ``condition``; ``probability``) goes on the
  test action of a ConditionalNode clause (or a body action of a clause
  without tests); it is an ``action+`` too (``cost``, ``repeat``, ``code``),
  and when the action also has another role stereotype it only adds its
  condition to that one;
  Names match case-insensitively ignoring ``_``, ``-`` and spaces, with
  ``Plus`` for ``+`` (:func:`uml2perf.model.normalise_name`);
* MARTE and profiles built on it: ``PaStep``/``GaStep`` (``hostDemand`` to
  cost, ``rep`` to repeat, ``prob`` to the probability of the flow that enters
  the step from a decision, or of the ConditionalNode clause whose test or
  body the step is), ``PaCommStep.msgSize`` to size, GRM
  ``ResourceUsage.execTime`` and DICE ``StormBolt.hostDemand`` to cost; VSL
  values are converted to seconds and bytes (:func:`parse_vsl_duration`,
  :func:`parse_vsl_size`);
* MARTE analysis contexts: ``GaAnalysisContext.context`` / ``contextParams``
  (``in$timeUpdate``, ``in$n=4``) declare variables of the activity the context
  is applied to (of every activity when it is applied to the model, a package
  or a class).  A parameter without a value is *required*: ``run`` stops and
  names it until ``--set`` or the sidecar's ``[variables]`` gives one.  VSL
  variables (``$x``) used in a MARTE value but declared nowhere are declared
  the same way, with a note;
* guards as people write them (:mod:`.guards`, docs/profile.md): an
  expression over known names, ``else``, a probability (``p=0.3``,
  ``prob:0.7``, ``70%``), or prose (``Yes``, ``not valid``, ``[Petición
  aceptada]``), which makes the decision a seeded random choice with a
  warning; guard text left in a flow's name is read the same way; a guard
  that mixes known and unknown names stays an error, with "did you mean";
* a TOML sidecar for plain exports without any profile.

The sidecar
-----------
::

    [defaults]
    cost = "0.001"            # cost of every action that has none (optional)

    [elements."A1"]           # a node or flow, by name or xmi:id
    cost = "121/P"            # tags of the element's role (action+ unless it has one)
    code = "GV = 1"

    [elements."_x8f"]
    stereotype = "allreduce+" # give the element a role
    size = "8"

    [elements."to A2"]        # a flow: probability and guard
    probability = "0.3"

    [activities."MainActivity"]
    main = true               # the main activity
    repeat = "2"              # tags of activity+

    [functions]               # cost functions the model lacks
    FA1 = "121/P"
    FA4 = { parameters = ["P"], body = "3.14 + 2.71*P" }

    [globals]                 # global variables and their defaults
    GV = "0"

    [variables]               # values of model variables (wins over the model's own)
    timeUpdate = "0.02"       # e.g. a MARTE analysis-context parameter in$timeUpdate

    [tags]                    # tags of another profile read as ours (units as in MARTE)
    "Timed.time" = "cost"     # <<Timed>> time = "50s" -> cost 50 s
    "Msg.bytes" = "send+.size"

Values are expressions (strings; numbers are accepted).  Sidecar entries win
over the model's own annotations.  ``[variables]`` sets the value of a variable
the model declares (an activity attribute, a global, a MARTE context
parameter) and declares it when the model does not; ``--set NAME=VALUE`` on the
command line wins over both.  A key naming no element, or a tag the role
does not know, is an error naming the sidecar file and the key; every such
problem is reported at once (:class:`SidecarError`), with "did you mean".  A
name that both a node and a flow carry applies where its tags fit, or asks
for the id.
"""

from __future__ import annotations

from .guards import GuardKind, GuardReading, read_guard
from .interpretation import apply_profile, key_is_else
from .main_activity import main_activity, no_activity_error
from .marte import (
    MARTE,
    ContextParameter,
    parse_context_parameters,
    parse_vsl_duration,
    parse_vsl_real,
    parse_vsl_size,
)
from .roles import CLAUSE_TAGS, MAIN_STEREOTYPES, PROBABILITY_TAGS, ROLES, TAG_SYNONYMS
from .sidecar import Sidecar, SidecarError, load_sidecar
from .variables import effective_variables, unset_variables, unset_variables_error, used_names

__all__ = [
    "CLAUSE_TAGS",
    "ContextParameter",
    "GuardKind",
    "GuardReading",
    "MAIN_STEREOTYPES",
    "MARTE",
    "PROBABILITY_TAGS",
    "ROLES",
    "Sidecar",
    "SidecarError",
    "TAG_SYNONYMS",
    "apply_profile",
    "effective_variables",
    "key_is_else",
    "load_sidecar",
    "main_activity",
    "no_activity_error",
    "parse_context_parameters",
    "parse_vsl_duration",
    "parse_vsl_real",
    "parse_vsl_size",
    "read_guard",
    "unset_variables",
    "unset_variables_error",
    "used_names",
]
