"""Memory of a long-running Guard over many sessions (issue #13: ``Guard._sessions`` grew
without bound, since a host such as the claude-agent-sdk never sends SessionEnd).

A child process (``python benchmarks/bench_memory.py <sessions>``) builds a Guard with
two no-op PreToolUse hooks on ``Bash`` and no ledger, then sends one PreToolUse from each of
``sessions`` distinct session ids (one event each, no SessionEnd), printing its resident
set size (``VmRSS``) every ``STEP`` sessions and the sessions the Guard still holds. With
the default ``max_sessions`` (10,000) the RSS stays flat once the cap is reached.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from _timing import table

SESSIONS = 100_000
STEP = 10_000
HERE = Path(__file__).resolve().parent


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _noop(event: object, ctx: object) -> None:
    return None


def _noop2(event: object, ctx: object) -> None:
    return None


def _child(sessions: int) -> None:
    from guardrails import AgentDefinition, Guard, HookMatcher, PreToolUse

    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[_noop, _noop2])]}
    guard = Guard(AgentDefinition(name="bench", hooks=hooks))
    points = [(0, _rss_mib(), len(guard._sessions))]
    for i in range(1, sessions + 1):
        ev = PreToolUse(
            tool_name="Bash", tool_input={"command": "ls"}, session_id=f"s{i:07d}", cwd="/tmp"
        )
        guard.emit_sync(ev)
        if i % STEP == 0:
            points.append((i, _rss_mib(), len(guard._sessions)))
    print(json.dumps(points))


def sessions_memory() -> None:
    """RSS of one Guard over 100,000 sessions that never end (flat past the session cap)."""
    print(__doc__.split("\n\n", 1)[1].rstrip() if __doc__ else "")
    print()
    done = subprocess.run(
        [sys.executable, str(Path(__file__)), str(SESSIONS)],
        capture_output=True,
        text=True,
        check=True,
        cwd=str(HERE.parent),
    )
    points = json.loads(done.stdout.strip().splitlines()[-1])
    base = points[0][1]
    rows = [[f"{n:,}", f"{rss:.1f}", f"{rss - base:+.1f}", f"{held:,}"] for n, rss, held in points]
    print(table(["sessions", "RSS MiB", "vs start", "held by the Guard"], rows))


if __name__ == "__main__":
    _child(int(sys.argv[1]) if len(sys.argv) > 1 else SESSIONS)
