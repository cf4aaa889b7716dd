"""A loop tested at the bottom: merge -> body -> decision -> merge."""

from builders import ModelBuilder


def build():
    b = ModelBuilder("dowhile", source="dowhile.uml")
    b.global_var("err", 1.0, type_name="Real")
    main = b.activity("main", main=True)
    m, d = main.merge("Iterate"), main.decision("Converged?")
    body = main.action("Sweep", 2, code="err = err / 2")
    main.chain(main.initial(), m, body, d)
    main.flow(d, main.final(), guard="err < 0.01")
    main.flow(d, m, guard="else")
    return b.build()
