"""A main activity calling a sub-activity twice (repeat) and a structured node."""

from builders import ModelBuilder


def build():
    b = ModelBuilder("nested", source="nested.uml")
    sub = b.activity("Exchange")
    s = sub.comm("Send right", "send", dest="(pid + 1) % nprocs", size=1024)
    r = sub.comm("Receive left", "recv", source="(pid - 1 + nprocs) % nprocs", size=1024)
    sub.chain(sub.initial(), s, r, sub.final())
    main = b.activity("main", main=True)
    call = main.call("Halo", sub.id, repeat=2)
    block = main.structured("Update")
    inner = block.action("Relax", "1 / nprocs")
    block.chain(block.initial(), inner, block.final())
    main.chain(main.initial(), call, block.id, main.final())
    return b.build()
