"""The timing protocol: blocks of calls per system, shuffled rounds, robust statistics.

Why this shape (../shared/notes/perf-techniques.md section 5):

* Each system is timed in its own *block* of consecutive calls, never
  round-robin per call: idle OpenMP/TBB pools of the other runtimes spin on the
  two vCPUs and slow everything down. Before each block the runner's thread
  settings are applied and the process sleeps ``settle_s`` so that the pool
  used by the previous block goes idle.
* Blocks are repeated in ``rounds``; the order of the systems is shuffled in
  every round so that a slow phase of the VM (episodic host stalls of exactly
  4, 8 or 16 ms) does not always hit the same system.
* A system's time is the **median of its block medians**; the **best block**
  (smallest block median) is reported too. Block medians within 2% of 4, 8 or
  16 ms are flagged as likely stalls.
* The garbage collector is off while timing.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from dataclasses import asdict, dataclass

__all__ = [
    "Protocol",
    "QUICK",
    "warm_up",
    "calls_per_block",
    "run_rounds",
    "summarize",
    "select_fastest",
    "is_quantized_stall",
]


@dataclass
class Protocol:
    rounds: int = 7
    warmup_calls: int = 3  # at least this many warm-up calls ...
    warmup_s: float = 0.05  # ... and at least this long
    block_s: float = 0.1  # target duration of one block
    min_calls: int = 3  # calls per block, bounds
    max_calls: int = 25
    settle_s: float = 0.01  # sleep before each block
    select_calls: int = 5  # configuration selection: calls per candidate ...
    select_s: float = 0.3  # ... or this time budget
    select_cutoff: float = 5.0  # drop a candidate whose first call is this much slower
    select_passes: int = 2  # passes over the candidates (reversed order each pass)

    def as_dict(self):
        return asdict(self)


QUICK = Protocol(
    rounds=2,
    warmup_calls=1,
    warmup_s=0.0,
    block_s=0.0,
    min_calls=2,
    max_calls=3,
    settle_s=0.005,
    select_calls=1,
    select_s=0.0,
    select_passes=1,
)


def _time_calls(fn, n):
    clock = time.perf_counter_ns
    times = []
    for _ in range(n):
        start = clock()
        fn()
        times.append(clock() - start)
    return times


def warm_up(runner, protocol):
    """Run warm-up calls; return the typical call time in seconds."""
    runner.activate()
    times = []
    start = time.perf_counter()
    while (
        len(times) < max(1, protocol.warmup_calls)
        or time.perf_counter() - start < protocol.warmup_s
    ):
        times.extend(_time_calls(runner, 1))
        if len(times) >= 200:
            break
    steady = times[1:] or times
    return statistics.median(steady) * 1e-9


def calls_per_block(estimate_s, protocol):
    if estimate_s <= 0:
        return protocol.max_calls
    n = math.ceil(protocol.block_s / estimate_s)
    return max(protocol.min_calls, min(protocol.max_calls, n))


def run_rounds(runners, calls, protocol, rng, on_block=None):
    """Time every runner in blocks; ``{name: [[ns per call] per block]}``.

    ``runners``: ``{name: runner}``; ``calls``: ``{name: calls per block}``;
    ``rng``: a ``random.Random`` shuffling the order in each round.
    """
    blocks = {name: [] for name in runners}
    order = list(runners)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(protocol.rounds):
            rng.shuffle(order)
            for name in order:
                runner = runners[name]
                runner.activate()
                if protocol.settle_s:
                    time.sleep(protocol.settle_s)
                blocks[name].append(_time_calls(runner, calls[name]))
                if on_block is not None:
                    on_block()
    finally:
        if was_enabled:
            gc.enable()
    return blocks


def is_quantized_stall(ms):
    """True for a block median within 2% of 4, 8 or 16 ms (the VM's stall values)."""
    return any(abs(ms - q) <= 0.02 * q for q in (4.0, 8.0, 16.0))


def summarize(blocks_ns):
    """Statistics of one system: median of block medians, best block, ... in ms."""
    medians = [statistics.median(b) * 1e-6 for b in blocks_ns if b]
    every = [t * 1e-6 for b in blocks_ns for t in b]
    return {
        "median_ms": statistics.median(medians),
        "best_block_ms": min(medians),
        "min_ms": min(every),
        "block_medians_ms": [round(m, 6) for m in medians],
        "calls_per_block": len(blocks_ns[0]) if blocks_ns else 0,
        "n_calls": len(every),
        "quantized_blocks": sum(is_quantized_stall(m) for m in medians),
    }


def select_fastest(candidates, protocol):
    """Time each built candidate briefly; return ``(best index, [seconds or None])``.

    ``candidates`` are runners (None for one that failed to build). Each pass
    times every candidate for ``select_calls`` calls (or ``select_s``) and
    keeps its median; passes alternate the order, and a candidate's time is
    its best pass. A candidate whose first call takes ``select_cutoff`` times
    longer than the best so far is not timed further (e.g. ORT
    AveragePool-19, up to 100x slower than opset 11).
    """
    times = [None] * len(candidates)
    dropped = set()
    best = math.inf
    order = list(range(len(candidates)))
    gc.disable()
    try:
        for p in range(max(1, protocol.select_passes)):
            for i in order if p % 2 == 0 else order[::-1]:
                runner = candidates[i]
                if runner is None or i in dropped:
                    continue
                runner.activate()
                if protocol.settle_s:
                    time.sleep(protocol.settle_s)
                first = _time_calls(runner, 1)[0] * 1e-9
                if first > protocol.select_cutoff * best:
                    dropped.add(i)
                    times[i] = first if times[i] is None else min(times[i], first)
                    continue
                samples = []
                start = time.perf_counter()
                while len(samples) < max(1, protocol.select_calls) and (
                    not samples or time.perf_counter() - start < protocol.select_s
                ):
                    samples.extend(_time_calls(runner, 1))
                t = statistics.median(samples) * 1e-9
                times[i] = t if times[i] is None else min(times[i], t)
                best = min(best, times[i])
    finally:
        gc.enable()
    valid = [(t, i) for i, t in enumerate(times) if t is not None and i not in dropped]
    if not valid:
        valid = [(t, i) for i, t in enumerate(times) if t is not None]
    return (min(valid)[1] if valid else None), times
