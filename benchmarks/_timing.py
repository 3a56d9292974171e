"""Small timing helpers shared by the benchmark sections.

Method (the same for every in-process measurement):

* ``time.perf_counter_ns`` around a plain ``for`` loop of ``loops`` calls;
  the loop overhead (a few ns) is included in every column alike.
* ``loops`` is calibrated per callable so one repeat lasts about
  ``TARGET_NS`` (20 ms), then ``REPEATS`` repeats are taken, interleaved
  round-robin between the callables compared in one row so drift (CPU
  frequency, a noisy neighbour) hits them all equally.
* The reported number is the **median** of the repeats, in ns per call.
* A ratio between two columns is taken **per round** (the two repeats of one round ran
  next to each other, so a noisy neighbour hits both) and reported as the median of the
  rounds with their spread, min-max (``ratio``, ``fmt_ratio``).
* The garbage collector is disabled during a timed loop (as ``timeit`` does).
"""

from __future__ import annotations

import gc
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

REPEATS = 9
TARGET_NS = 10_000_000


def _run(fn: Callable[[Any], Any], arg: Any, loops: int) -> int:
    """Time ``loops`` calls of ``fn(arg)``; total ns."""
    rng = range(loops)
    enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        for _ in rng:
            fn(arg)
        return time.perf_counter_ns() - t0
    finally:
        if enabled:
            gc.enable()


def calibrate(fn: Callable[[Any], Any], arg: Any, target_ns: int = TARGET_NS) -> int:
    """A loop count that makes one repeat last roughly ``target_ns``."""
    loops = 16
    while True:
        elapsed = _run(fn, arg, loops)
        if elapsed >= target_ns // 4 or loops >= 1 << 24:
            return max(1, int(loops * target_ns / max(elapsed, 1)))
        loops *= 4


def rounds(
    fns: Sequence[Callable[[Any], Any]], arg: Any, repeats: int = REPEATS
) -> list[list[float]]:
    """ns per call of each ``fn(arg)`` in each round (``[fn][round]``), interleaved."""
    for fn in fns:  # warm up: fill caches, create sessions, specialise bytecode
        _run(fn, arg, 200)
    loops = [calibrate(fn, arg) for fn in fns]
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            samples[i].append(_run(fn, arg, loops[i]) / loops[i])
    return samples


def compare(fns: Sequence[Callable[[Any], Any]], arg: Any, repeats: int = REPEATS) -> list[float]:
    """Median ns per call of each ``fn(arg)``, repeats interleaved round-robin."""
    return [statistics.median(s) for s in rounds(fns, arg, repeats)]


def ratio(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """The ratio a/b per round: (median, min, max)."""
    per = [x / y for x, y in zip(a, b, strict=True) if y]
    return statistics.median(per), min(per), max(per)


def fmt_ratio(r: tuple[float, float, float]) -> str:
    """``1.23x (1.10-1.40)``: the median ratio of the rounds and their spread."""
    return f"{r[0]:.2f}x ({r[1]:.2f}-{r[2]:.2f})"


def wall_ms(
    argv: Sequence[str],
    runs: int,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> float:
    """Median wall time in ms of running ``argv`` to completion ``runs`` times."""
    subprocess.run(argv, check=True, capture_output=True, cwd=cwd, env=env)  # warm .pyc, caches
    times = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        subprocess.run(argv, check=True, capture_output=True, cwd=cwd, env=env)
        times.append((time.perf_counter_ns() - t0) / 1e6)
    return statistics.median(times)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A right-aligned plain-text table (first column left-aligned)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        out = [cells[0].ljust(widths[0])]
        out += [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join(out).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])
