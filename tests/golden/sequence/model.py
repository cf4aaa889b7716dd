"""Three actions in a row, with a global and a cost function."""

from builders import ModelBuilder


def build():
    b = ModelBuilder("sequence", source="sequence.uml")
    b.global_var("N", 100, type_name="Integer")
    b.function("Work", "0.5 * n", params=("n",))
    main = b.activity("main", main=True)
    a = main.action("Read input", "1.5")
    c = main.action("Compute", "Work(N)", code="N = N * 2")
    d = main.action("Write output", "log2(N)")
    main.chain(main.initial(), a, c, d, main.final())
    return b.build()
