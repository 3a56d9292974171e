"""Cost of an idempotency claim, against a hand-written sqlite3 floor.

Every claim is a NEW key (the common case: a side-effecting call not seen
before), claimed before the call and marked completed after it. Each column
writes to its own ledger file in a temporary directory, created by opening a
``Ledger`` (the real schema and pragmas: WAL, ``synchronous=NORMAL``,
``busy_timeout``).

Columns (microseconds per claim; median of repeats of ``CLAIMS`` claims,
interleaved round-robin, gc off while timing; events and keys are built
before the timed loop):

* ``floor``: a raw stdlib ``sqlite3`` connection doing one ``INSERT OR IGNORE``
  into ``idempotency_keys`` in its own ``BEGIN IMMEDIATE`` transaction, checking
  ``rowcount``, then one ``UPDATE`` to ``completed`` with a short result in a
  second transaction. Keys are precomputed sha256 hex digests (random places in
  the primary key's B-tree, as real keys): the SQL alone.
* ``hook``: ``IdempotencyGuard`` called directly, ``hook(pre, ctx)`` then
  ``hook(post, ctx)``, on a ``charge`` tool declared ``side_effects: true``,
  with a ctx holding a Guard whose ledger is the file. It adds what the floor
  leaves out: canonical JSON and two sha256 (key and payload hash), the
  policy lookup, the result's redaction and JSON, the ``write_transaction``
  context manager.

``run_tool`` rows, for context: a whole guarded call with the ledger
(``guard.sync.run_tool``) without and with the hook bound to PreToolUse and
PostToolUse. The difference is what adding the hook costs a real call: its two
transactions, plus what the ledger then records besides (a ``hook_runs`` row per
event, the claim's annotations on the call).
"""

from __future__ import annotations

import gc
import hashlib
import os
import sqlite3
import statistics
import tempfile
import time
import types
from collections.abc import Callable
from typing import Any

from _timing import table

from guardrails import AgentDefinition, Guard, HookMatcher, Ledger, PostToolUse, PreToolUse
from guardrails.builtins import IdempotencyGuard

CLAIMS = 2_000
REPEATS = 7
BUSY_TIMEOUT = 5.0
TOOLS = {"charge": {"side_effects": True}}
RESULT = {"charge_id": "ch_123", "status": "succeeded"}


def _tool(amount: int) -> dict[str, str]:
    return RESULT


def _raw(path: str) -> sqlite3.Connection:
    Ledger(path).close()
    conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


_INSERT = (
    "INSERT OR IGNORE INTO idempotency_keys (key, scope, session_id, agent_id, tool_name, "
    "payload_hash, state, tool_call_id, result, created_at, updated_at, expires_at) "
    "VALUES (?, 'session', ?, NULL, 'charge', ?, 'in_progress', ?, NULL, ?, ?, ?)"
)
_UPDATE = (
    "UPDATE idempotency_keys SET state = 'completed', result = ?, updated_at = ? "
    "WHERE key = ? AND tool_call_id IS ? AND state = 'in_progress'"
)


def _floor(conn: sqlite3.Connection) -> Callable[[int], int]:
    ex = conn.execute
    at, expires = "2025-01-01T00:00:00.000Z", "2025-01-02T00:00:00.000Z"
    result = '{"charge_id":"ch_123","status":"succeeded"}'
    prefix = os.urandom(8).hex()
    counter = [0]

    def run(n: int) -> int:
        start = counter[0]
        counter[0] += n
        # sha256-like keys land all over the primary key's B-tree, as real keys do
        keys = [
            hashlib.sha256(f"{prefix}{i}".encode()).hexdigest() for i in range(start, counter[0])
        ]
        t0 = time.perf_counter_ns()
        for key in keys:
            ex("BEGIN IMMEDIATE")
            owned = ex(_INSERT, (key, "s", key, "toolu_" + key[:24], at, at, expires)).rowcount
            ex("COMMIT")
            assert owned == 1
            ex("BEGIN IMMEDIATE")
            ex(_UPDATE, (result, at, key, "toolu_" + key[:24]))
            ex("COMMIT")
        return time.perf_counter_ns() - t0

    return run


def _hook(path: str) -> Callable[[int], int]:
    hook = IdempotencyGuard()
    defn = AgentDefinition(name="bench", tools=TOOLS)
    guard = Guard(defn, ledger=Ledger(path))
    ctx = types.SimpleNamespace(
        guard=guard, definition=defn, state={}, session_id="s", clock=time.time
    )
    counter = [0]

    def run(n: int) -> int:
        events = []
        for _ in range(n):
            counter[0] += 1
            i = counter[0]
            tid = f"toolu_{i:024x}"
            fields: dict[str, Any] = {
                "tool_name": "charge",
                "tool_input": {"amount": i},
                "tool_use_id": tid,
            }
            events.append(
                (
                    PreToolUse(session_id="s", cwd="/tmp", **fields),
                    PostToolUse(session_id="s", cwd="/tmp", tool_response=RESULT, **fields),
                )
            )
        t0 = time.perf_counter_ns()
        for pre, post in events:
            r = hook(pre, ctx)
            assert r is not None and r.decision is None  # claimed, not denied
            hook(post, ctx)
        return time.perf_counter_ns() - t0

    return run


def _run_tool(path: str, with_hook: bool) -> Callable[[int], int]:
    hooks: dict[str, list[Any]] = {}
    if with_hook:
        h = IdempotencyGuard()
        hooks = {e: [HookMatcher(matcher="*", hooks=[h])] for e in ("PreToolUse", "PostToolUse")}
    guard = Guard(AgentDefinition(name="bench", tools=TOOLS, hooks=hooks), ledger=Ledger(path))
    call = guard.sync.run_tool
    counter = [0]

    def run(n: int) -> int:
        start = counter[0]
        counter[0] += n
        inputs = [{"amount": i} for i in range(start, start + n)]
        t0 = time.perf_counter_ns()
        for tool_input in inputs:
            call("charge", tool_input, _tool)
        return time.perf_counter_ns() - t0

    return run


def _measure(runs: list[Callable[[int], int]]) -> list[float]:
    """Median µs per claim of each runner, repeats interleaved round-robin."""
    samples: list[list[float]] = [[] for _ in runs]
    for run in runs:  # warm up: statements prepared, pages cached
        run(200)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(REPEATS):
            for i, run in enumerate(runs):
                samples[i].append(run(CLAIMS) / CLAIMS / 1000)
    finally:
        if enabled:
            gc.enable()
    return [statistics.median(s) for s in samples]


def idempotency_claim_bench() -> None:
    """Idempotency claim: IdempotencyGuard vs a raw INSERT OR IGNORE + UPDATE."""
    print(__doc__.split("\n\n", 1)[1].rstrip() if __doc__ else "")
    print()
    with tempfile.TemporaryDirectory() as tmp:
        floor_conn = _raw(os.path.join(tmp, "floor.db"))
        try:
            floor_us, hook_us, plain_us, guarded_us = _measure(
                [
                    _floor(floor_conn),
                    _hook(os.path.join(tmp, "hook.db")),
                    _run_tool(os.path.join(tmp, "plain.db"), with_hook=False),
                    _run_tool(os.path.join(tmp, "guarded.db"), with_hook=True),
                ]
            )
        finally:
            floor_conn.close()
    rows = [
        ["claim + completion: floor (raw sqlite3)", f"{floor_us:.1f}", "1.00x"],
        ["claim + completion: IdempotencyGuard", f"{hook_us:.1f}", f"{hook_us / floor_us:.2f}x"],
        ["run_tool with ledger, no idempotency", f"{plain_us:.1f}", ""],
        [
            "run_tool with ledger + idempotency_guard",
            f"{guarded_us:.1f}",
            f"+{guarded_us - plain_us:.1f} µs",
        ],
    ]
    print(table(["case (new key each time)", "µs/claim", "vs floor"], rows))
    print(
        f"\nIdempotencyGuard costs {hook_us / floor_us:.2f}x the raw SQL floor "
        f"(+{hook_us - floor_us:.1f} µs per claim; reported, not asserted)."
    )


if __name__ == "__main__":
    idempotency_claim_bench()
