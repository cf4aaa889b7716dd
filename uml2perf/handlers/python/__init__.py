"""The ``python`` content handler: the executable performance-model module.

* :mod:`.handler` turns the recovered statement tree into view records;
* :mod:`.views` the view records the templates print;
* :mod:`.printer` model expressions validated and printed as Python;
* :mod:`.literals` model text as Python literals and comments;
* :mod:`.limits` Python's limits on nesting, checked on the output.

The handler class is ``uml2perf.handlers.python.handler:PythonHandler`` (the
entry point ``python`` of the group ``uml2perf.handlers``); this package
imports nothing itself, so that its limits can be read without the handler.
"""
