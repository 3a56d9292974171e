"""The shell guards per command, over the benign corpora of ``tests/redteam/``.

Each column is one pass over every command of both corpora (~740 real commands),
divided by their number: ``classify`` with its cache bypassed (the parse and the
analysis), ``DenyCommands.check`` and the ``protect_paths`` hook on a ``Bash``
event (each with the classify cache cleared first, as in a fresh hook process), and
the two hooks together (they share one classify). Passes interleaved round-robin,
median of ``REPEATS``, us per command, with the spread (min-max of the repeats).
Below: the slowest commands for ``classify`` (median of 3 runs each).
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _timing import table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

REPEATS = 7
SLOWEST = 5


def shell_guards() -> None:
    """The shell guards per command on the benign corpora (classify, deny, protect_paths)."""
    from guardrails.builtins.paths import protect_paths
    from guardrails.builtins.shell.classify import _classify_cached
    from guardrails.builtins.shell.deny import deny_commands
    from guardrails.testing import make_event
    from tests.redteam.benign_independent import BENIGN_INDEPENDENT
    from tests.redteam.benign_transcripts import BENIGN

    commands = [b.command for b in (*BENIGN, *BENIGN_INDEPENDENT)]
    events = [
        make_event("PreToolUse", tool_name="Bash", tool_input={"command": c}, cwd="/project")
        for c in commands
    ]
    raw, clear = _classify_cached.__wrapped__, _classify_cached.cache_clear

    def classify_all() -> None:
        for c in commands:
            raw(c)

    def check_all() -> None:
        for c in commands:
            clear()
            deny_commands.check(c)

    def paths_all() -> None:
        for e in events:
            clear()
            protect_paths(e, None)

    def both_all() -> None:
        for e in events:
            clear()
            deny_commands(e, None)
            protect_paths(e, None)

    columns: dict[str, Callable[[], None]] = {
        "classify (uncached)": classify_all,
        "DenyCommands.check": check_all,
        "protect_paths hook": paths_all,
        "both hooks": both_all,
    }
    samples: dict[str, list[float]] = {name: [] for name in columns}
    for fn in columns.values():
        fn()  # warm up
    for _ in range(REPEATS):
        for name, fn in columns.items():
            gc.disable()
            t0 = time.perf_counter_ns()
            fn()
            elapsed = time.perf_counter_ns() - t0
            gc.enable()
            samples[name].append(elapsed / len(commands) / 1000)
    rows = [
        [name, f"{statistics.median(s):.1f}", f"{min(s):.1f}-{max(s):.1f}"]
        for name, s in samples.items()
    ]
    print(f"{len(commands)} commands, {REPEATS} passes per column, interleaved\n")
    print(table(["per command", "median us", "spread us"], rows))

    per: list[tuple[float, str]] = []
    for c in commands:
        runs = []
        for _ in range(3):
            t0 = time.perf_counter_ns()
            raw(c)
            runs.append((time.perf_counter_ns() - t0) / 1000)
        per.append((statistics.median(runs), c))
    per.sort(reverse=True)
    print(f"\nslowest for classify (us, of {len(commands)}):")
    for us, c in per[:SLOWEST]:
        line = c.replace("\n", "\\n")
        print(f"  {us:7.1f}  {line[:90]}{'...' if len(line) > 90 else ''}")
