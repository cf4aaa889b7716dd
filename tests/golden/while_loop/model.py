"""A loop tested at the top: merge -> decision -> body -> merge."""

from builders import ModelBuilder


def build():
    b = ModelBuilder("while", source="while.uml")
    main = b.activity("main", main=True)
    main.local("i", 0, type_name="Integer")
    m, d = main.merge("Loop"), main.decision("More?")
    body = main.action("Step", "0.1 * (i + 1)", code="i = i + 1")
    done = main.action("Done", 1)
    main.chain(main.initial(), m, d)
    main.flow(d, body, guard="i < 10")
    main.flow(d, done, guard="else")
    main.chain(body, m)
    main.chain(done, main.final())
    return b.build()
