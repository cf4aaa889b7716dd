"""The ring with rendezvous messages in plain SimPy: the events uml2perf spends, and nothing else.

Messages above the eager limit wait for their receiver: the transfer starts when both the send
and the matching receive are there and ends ``latency + size / bandwidth`` later, for both.  So
that no send waits forever, even ranks send to the right and then receive from the left, odd
ranks receive first (the model ``synthetic.rendezvous_ring_model`` writes the same decision).

Event for event what uml2perf does for it:

* a compute step is one ``timeout``;
* the side that comes second (a send finding its receive posted, or a receive finding its sender
  waiting) schedules the other side's parked event at the end of the transfer and waits for that
  end itself with one ``timeout``;
* the side that comes first parks on one plain event.

It prints the same JSON as the other ring floors (``ring_floor.py``).
"""

from __future__ import annotations

import time

import simpy
from lean_simpy_ring import link
from ring_floor import ring_main
from simpy.events import NORMAL


def run(
    procs: int,
    rounds: int,
    work: float,
    size: float,
    ppn: int,
    intra: tuple[float, float],
    inter: tuple[float, float],
) -> tuple[float, int, float]:
    """Simulate the ring; return (simulated time, events scheduled, seconds in the event loop)."""
    env = simpy.Environment()
    waiting_sender: list[simpy.Event | None] = [None] * procs  # by receiver: its sender's parked event
    waiting_receiver: list[simpy.Event | None] = [None] * procs  # by receiver: its own parked event
    schedule = env.schedule

    def fire(event: simpy.Event, at: float) -> None:
        event._ok = True  # what succeed() sets, but fired at the end of the transfer
        event._value = None
        schedule(event, NORMAL, at - env.now)

    def process(pid: int):
        right = (pid + 1) % procs
        left = (pid - 1) % procs
        latency_out, beta_out = link(pid, right, ppn, intra, inter)
        latency_in, beta_in = link(left, pid, ppn, intra, inter)
        timeout = env.timeout
        event = env.event
        even = pid % 2 == 0

        for _ in range(rounds):
            yield timeout(work)
            for step in (0, 1):  # even ranks: send, then receive; odd ranks: receive, then send
                if (step == 0) == even:  # send (written out, not a sub-generator: no extra frame)
                    receiver = waiting_receiver[right]
                    if receiver is None:
                        waiting_sender[right] = ev = event()
                        yield ev
                    else:
                        waiting_receiver[right] = None
                        now = env.now
                        end = now + (latency_out + 0.0) + size * beta_out  # no handshake: as uml2perf sums
                        fire(receiver, end)
                        yield timeout(end - now)
                else:  # receive
                    sender = waiting_sender[pid]
                    if sender is None:
                        waiting_receiver[pid] = ev = event()
                        yield ev
                    else:
                        waiting_sender[pid] = None
                        now = env.now
                        end = now + (latency_in + 0.0) + size * beta_in
                        fire(sender, end)
                        yield timeout(end - now)

    for pid in range(procs):
        env.process(process(pid))
    start = time.perf_counter()
    env.run()
    loop_s = time.perf_counter() - start
    return env.now, next(env._eid), loop_s  # SimPy numbers every scheduled event: the next id is the count


def main(argv: list[str] | None = None) -> int:
    return ring_main(run, __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
