"""Every kind of generated statement at least once, so the golden output shows each template section.

Actions with code and cost, communication (blocking, non-blocking across activities,
collective), a call, if/elif/else, a probabilistic choice, a while loop through a
decision, a counted loop, a repeat tag, inline and scoped structured nodes, a loop
node with setup/test/body sections and a final node in its body, a conditional node,
fork/join with an activity final in one branch, a parallel region holding a critical
section, a pipeline, a task pool and an unstructured region run as a state machine.
"""

from builders import ModelBuilder

from uml2perf.model import Role


def build():
    b = ModelBuilder("all_statements", source="all_statements.uml")
    b.global_var("mode", 1)
    b.global_var("i", 0)
    b.global_var("k", 0)
    b.global_var("x", 1)
    b.global_var("a", 0)
    b.global_var("c", 0)
    b.function("Work", "0.5 + w / 10", params=("w",))

    post = b.activity("Post")
    ping = post.comm("Ping", Role.ISEND, dest="(pid + 1) % nprocs", size=64)
    pong = post.comm("Pong", Role.IRECV, source="(pid + nprocs - 1) % nprocs", size=64)
    post.chain(post.initial(), ping, pong, post.final())

    race = b.activity("Race")
    f, j = race.fork("Split"), race.join("Meet")
    quick = race.action("Quick", 1)
    slow1, slow2 = race.action("Slow1", 2), race.action("Slow2", 5)
    after = race.action("NeverRuns", 1)
    race.chain(race.initial(), f)
    race.chain(f, quick, race.final("Done"))
    race.chain(f, slow1, slow2, j)
    race.chain(j, after, race.final())

    tangle = b.activity("Tangle")
    start = tangle.action("Start", 1)
    d = tangle.decision("D")
    ta = tangle.action("TA", 1, code="a = a + 1")
    tb = tangle.action("TB", 1, code="c = c + 1")
    da, db = tangle.decision("DA"), tangle.decision("DB")
    tangle.chain(tangle.initial(), start, d)
    tangle.flow(d, ta, guard="x > 0")
    tangle.flow(d, tb, guard="else")
    tangle.chain(ta, da)
    tangle.chain(tb, db)
    tangle.flow(da, tb, guard="a < 3")
    tangle.flow(da, tangle.final(), guard="else")
    tangle.flow(db, ta, guard="c < 2")
    tangle.flow(db, tangle.final(), guard="else")

    main = b.activity("main", main=True)
    main.local("tmp", 2)
    a1 = main.action("A1", "Work(mode)", code="i = 0\nk = mode * 2")
    choose = main.decision("Choose")
    m1, m2, m3 = main.action("M1", 1), main.action("M2", 2), main.action("M3", 3)
    joined = main.merge()
    coin = main.decision("Coin")
    heads, tails = main.action("Heads", 1), main.action("Tails", 2)
    landed = main.merge()
    head = main.merge("Again")
    step = main.action("Step", 1, code="i = i + 1")
    more = main.decision("More")
    rep = main.action("Rep", 0.5, repeat=3)
    inline = main.structured("Inline")
    inner = inline.action("Inner", 1)
    inline.chain(inline.initial(), inner, inline.final())
    counted = main.structured("Counted", role=Role.LOOP, iterations="mode + 1")
    tick = counted.action("Tick", 0.25)
    counted.chain(counted.initial(), tick, counted.final())
    loop = main.loop_node("Search", decider="k < 6")
    init = loop.action("Init", 0, code="k = 0")
    probe = loop.action("Probe", 1)
    visit = loop.action("Visit", 1, code="k = k + 1")
    found = loop.decision("Found")
    stop = loop.final("Stop")
    keep = loop.action("Keep", 0.5)
    loop.chain(visit, found)
    loop.flow(found, stop, guard="k >= 2")
    loop.flow(found, keep, guard="else")
    loop.setup = [init]
    loop.test = [probe]
    loop.body = [visit, keep]  # sections list executable nodes; Found and Stop join through the flows
    retry = main.structured("Retry", role=Role.LOOP, iterations=2)
    split = retry.fork("TryBoth")
    retry.chain(retry.initial(), split)
    retry.chain(split, retry.action("Try", 1), retry.final("GiveUp"))
    retry.chain(split, retry.action("Slow", 2), retry.action("Tidy", 1), retry.flow_final())
    scan = main.loop_node("Scan", decider="k < 8")
    zero = scan.action("Zero", 0, code="k = 5")
    inc = scan.action("Inc", 0.5, code="k = k + 1")
    scan.setup = [zero]
    scan.body = [inc]
    cond = main.conditional("Pick")
    c1 = cond.action("P1", 1)
    c2 = cond.action("P2", 2)
    cond.clause("mode == 1", c1)
    cond.clause(None, c2)
    call_post = main.call("CallPost", post.id)
    wait = main.comm("WaitAll", Role.WAIT)
    call_race = main.call("CallRace", race.id)
    call_tangle = main.call("CallTangle", tangle.id)
    region = main.structured("Team", role=Role.PARALLEL, threads=2)
    lock = region.structured("Guard", role=Role.CRITICAL)
    upd = lock.action("Update", 0.5)
    lock.chain(lock.initial(), upd, lock.final())
    local_work = region.action("Local", 1)
    region.chain(region.initial(), local_work, lock.id, region.final())
    pipe = main.structured("Stream", role=Role.PIPELINE, items=3)
    s1, s2 = pipe.action("Read", 1), pipe.action("Write", 2)
    pipe.chain(pipe.initial(), s1, s2, pipe.final())
    pool = main.structured("Pool", role=Role.TASKPOOL, threads=2, items=4)
    task = pool.action("Task", 1)
    pool.chain(pool.initial(), task, pool.final())
    sync = main.comm("Sync", Role.BARRIER)

    main.chain(main.initial(), a1, choose)
    main.flow(choose, m1, guard="mode == 1")
    main.flow(choose, m2, guard="mode == 2")
    main.flow(choose, m3, guard="else")
    for m in (m1, m2, m3):
        main.chain(m, joined)
    main.chain(joined, coin)
    main.flow(coin, heads, probability="0.5")
    main.flow(coin, tails, probability="0.5")
    main.chain(heads, landed)
    main.chain(tails, landed)
    main.chain(landed, head, step, more)
    main.flow(more, head, guard="i < 3")
    main.flow(more, rep, guard="else")
    main.chain(
        rep,
        inline.id,
        counted.id,
        loop.id,
        retry.id,
        scan.id,
        cond.id,
        call_post,
        wait,
        call_race,
        call_tangle,
        region.id,
        pipe.id,
        pool.id,
        sync,
        main.final(),
    )
    return b.build()
