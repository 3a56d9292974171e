"""A big ledger for the query benchmarks: ``N`` tool calls written with ``executemany``.

The schema is the one the code under test makes (a ``Ledger`` opens the file first), so
the same generator fills a ledger of any version. The shape follows what a Guard writes:

* sessions of ``CALLS_PER_SESSION`` calls each, one agent, started one after another;
* calls of a dozen tools (``Bash`` the most), mostly ``ok``, some ``denied`` (a deny hook
  named), ``error``, ``interrupted`` and a few still ``pending``; one arguments value in
  ten is met again in its session (so ``repeated_calls`` has groups);
* hook runs, one ``hook_run_sets`` row per event (as a Guard writes them): two runs on
  PreToolUse and one on PostToolUse per call that ran, the second PreToolUse one denying a
  denied call; a few hook failures (error, timeout) and injections (a PostToolUse nudge,
  a UserPromptSubmit context), so most sets are all no-ops with ``flags`` 0;
* one UserPromptSubmit and one Stop (a tenth blocked) per ten calls, each with a hook run.

``python benchmarks/gen_ledger.py PATH [CALLS]`` writes one; the query section caches
the file it made per schema version in the temporary folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from guardrails import Ledger

CALLS_PER_SESSION = 200
TOOLS = [
    ("Bash", 40), ("Read", 18), ("Edit", 10), ("Grep", 8), ("Write", 5), ("Glob", 5),
    ("WebFetch", 3), ("Task", 3), ("TodoWrite", 3), ("mcp__github__create_pr", 2),
    ("mcp__db__query", 2), ("NotebookEdit", 1),
]  # fmt: skip
#: ``hook_run_sets.flags`` of a run's outcome (sql/migrations/0007_hook_run_sets.sql)
FLAGS = {"deny": 1, "block": 1, "error": 2, "timeout": 2, "inject": 4}
HOOKS = ["deny_commands", "protect_paths", "schema_guardrail", "audit", "budget", "nudge"]
STATUSES = [("ok", 860), ("denied", 70), ("error", 45), ("interrupted", 24), ("pending", 1)]
BATCH = 50_000


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _set(
    sid: str, event: str, cid: str | None, event_id: int | None, at: str, runs: list[list[Any]]
) -> tuple[Any, ...]:
    """One ``hook_run_sets`` row: an event's runs as JSON, with their flags."""
    flags = 0
    for run in runs:
        flags |= FLAGS.get(run[3], 0)
    return (sid, event, cid, event_id, at, json.dumps(runs), flags)


def generate(path: str, calls: int, seed: int = 13) -> dict[str, Any]:
    """Fill a new ledger at ``path`` with ``calls`` tool calls; what it wrote."""
    Ledger(path).close()  # the schema of the code under test
    rnd = random.Random(seed)
    tools = [t for t, w in TOOLS for _ in range(w)]
    statuses = [s for s, w in STATUSES for _ in range(w)]
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -262144")
    t0 = time.perf_counter()
    base = datetime(2026, 1, 1, tzinfo=UTC)
    calls_rows: list[tuple[Any, ...]] = []
    runs: list[tuple[Any, ...]] = []
    events: list[tuple[Any, ...]] = []
    event_runs: list[tuple[Any, ...]] = []
    counts = {"tool_calls": 0, "hook_run_sets": 0, "hook_runs": 0, "events": 0, "sessions": 0}
    event_id = 0
    conn.execute("BEGIN")

    def flush() -> None:
        conn.executemany(
            "INSERT INTO tool_calls (session_id, agent_name, tool_call_id, tool_name, "
            "tool_call_arguments, final_arguments, arguments_hash, decision, reason, status, "
            "tool_call_result, result_bytes, error_type, error_message, started_at, "
            "finished_at, duration_ms, pid) VALUES "
            "(?, 'bench', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            calls_rows,
        )
        conn.executemany(
            "INSERT INTO events (id, session_id, event, payload, decision, reason, "
            "injected_chars, created_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?)",
            events,
        )
        conn.executemany(
            "INSERT INTO hook_run_sets (session_id, event, tool_call_id, event_id, created_at, "
            "runs, flags) VALUES (?, ?, ?, ?, ?, ?, ?)",
            runs + event_runs,
        )
        counts["tool_calls"] += len(calls_rows)
        counts["events"] += len(events)
        counts["hook_run_sets"] += len(runs) + len(event_runs)
        counts["hook_runs"] += sum(len(json.loads(r[5])) for r in runs + event_runs)
        for rows in (calls_rows, runs, events, event_runs):
            rows.clear()

    sessions = (calls + CALLS_PER_SESSION - 1) // CALLS_PER_SESSION
    at = base
    for s in range(sessions):
        sid = f"sess-{s:07d}-{rnd.getrandbits(32):08x}"
        started = at
        n = min(CALLS_PER_SESSION, calls - s * CALLS_PER_SESSION)
        for i in range(n):
            at += timedelta(milliseconds=rnd.randint(50, 900))
            stamp = _iso(at)
            if i % 10 == 0:
                for name, decision in (
                    ("UserPromptSubmit", "allow"),
                    ("Stop", "block" if rnd.random() < 0.1 else "allow"),
                ):
                    event_id += 1
                    events.append((event_id, sid, name, "{}", decision, None, stamp))
                    outcome = "block" if decision == "block" else "noop"
                    chars = 0
                    if name == "UserPromptSubmit" and rnd.random() < 0.03:
                        outcome, chars = "inject", 120
                    dur = rnd.lognormvariate(-1.0, 1.0)
                    event_runs.append(
                        _set(sid, name, None, event_id, stamp,
                             [["stop_check", None, 100, outcome, dur, None, chars]])
                    )  # fmt: skip
            tool = rnd.choice(tools)
            status = rnd.choice(statuses)
            arg = i % 20 if rnd.random() < 0.1 else i
            args = json.dumps({"command": f"make target-{arg}", "session": s % 7})
            digest = hashlib.sha256(args.encode()).hexdigest()
            cid = "toolu_" + rnd.getrandbits(96).to_bytes(12, "big").hex()
            dur = round(rnd.lognormvariate(3.0, 1.2), 3)
            result = error = etype = None
            decision, reason, finished, size = "allow", None, stamp, None
            if status == "ok":
                result = json.dumps(f"output of {tool} #{i}")
                size = len(result)
            elif status == "error":
                etype, error = "ToolError", f"exit status {rnd.randint(1, 3)}"
            elif status == "interrupted":
                error = "interrupted: the call never finished"
            elif status == "denied":
                decision, reason, dur = "deny", f"{tool} is not allowed here ({arg % 3})", 0.0
            else:
                finished, dur = None, None
            calls_rows.append(
                (sid, cid, tool, args, args, digest, decision, reason, status, result, size,
                 etype, error, stamp, finished, dur, 4242)
            )  # fmt: skip
            h1, h2 = HOOKS[i % 3], HOOKS[3 + i % 3]
            fail = rnd.random()
            first = "error" if fail < 0.003 else "timeout" if fail < 0.005 else "noop"
            second = "deny" if status == "denied" else "noop"
            pre = [
                [h1, tool, 100, first, rnd.lognormvariate(-2.0, 1.0),
                 None if first == "noop" else "boom", 0],
                [h2, tool, 100, second, rnd.lognormvariate(-1.5, 1.0), None, 0],
            ]  # fmt: skip
            runs.append(_set(sid, "PreToolUse", cid, None, stamp, pre))
            if status != "denied":
                nudge = rnd.random() < 0.02
                post = [["audit", tool, 100, "inject" if nudge else "noop",
                         rnd.lognormvariate(-2.5, 1.0), None, 80 if nudge else 0]]  # fmt: skip
                runs.append(_set(sid, "PostToolUse", cid, None, stamp, post))
            if len(calls_rows) >= BATCH:
                flush()
        conn.execute(
            "INSERT INTO sessions (session_id, agent_name, tenant, cwd, started_at, last_seen_at) "
            "VALUES (?, 'bench', NULL, '/home/user/project', ?, ?)",
            (sid, _iso(started), _iso(at)),
        )
        counts["sessions"] += 1
    flush()
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    counts["seconds"] = round(time.perf_counter() - t0, 1)
    counts["mib"] = round(os.path.getsize(path) / 2**20)
    return counts


if __name__ == "__main__":
    target = sys.argv[1]
    print(generate(target, int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000))
