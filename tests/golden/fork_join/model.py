"""Fork/join with two branches, then a barrier."""

from builders import ModelBuilder


def build():
    b = ModelBuilder("forkjoin", source="forkjoin.uml")
    main = b.activity("main", main=True)
    f, j = main.fork("Split"), main.join("Meet")
    x, y = main.action("Left", 3), main.action("Right", 4)
    sync = main.comm("Sync", "barrier")
    main.chain(main.initial(), f)
    main.chain(f, x, j)
    main.chain(f, y, j)
    main.chain(j, sync, main.final())
    return b.build()
