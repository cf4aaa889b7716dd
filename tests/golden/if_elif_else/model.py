"""A decision with two guards and an else, merged before the last action."""

from builders import ModelBuilder


def build():
    b = ModelBuilder("choice", source="choice.uml")
    b.global_var("mode", 1, type_name="Integer")
    main = b.activity("main", main=True)
    d, m = main.decision("Which mode"), main.merge()
    x, y, z = main.action("Fast", 1), main.action("Slow", 5), main.action("Fallback", 9)
    last = main.action("Finish", 1)
    main.chain(main.initial(), d)
    main.flow(d, x, guard="mode = 1")
    main.flow(d, y, guard="mode <> 1 and mode < 3")
    main.flow(d, z, guard="else")
    for n in (x, y, z):
        main.chain(n, m)
    main.chain(m, last, main.final())
    return b.build()
