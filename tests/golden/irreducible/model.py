"""Two loops entered in the middle: only a state machine describes this flow."""

from builders import ModelBuilder


def build():
    b = ModelBuilder("irreducible", source="irreducible.uml")
    b.global_var("x", 1)
    b.global_var("a", 0)
    b.global_var("b", 0)
    main = b.activity("main", main=True)
    start = main.action("Start", 1)
    d = main.decision("D")
    a = main.action("A", 1, code="a = a + 1")
    bb = main.action("B", 1, code="b = b + 1")
    da, db = main.decision("DA"), main.decision("DB")
    end = main.action("End", 1)
    main.chain(main.initial(), start, d)
    main.flow(d, a, guard="x > 0")
    main.flow(d, bb, guard="else")
    main.chain(a, da)
    main.chain(bb, db)
    main.flow(da, bb, guard="a < 3")
    main.flow(da, end, guard="else")
    main.flow(db, a, guard="b < 2")
    main.flow(db, end, guard="else")
    main.chain(end, main.final())
    return b.build()
