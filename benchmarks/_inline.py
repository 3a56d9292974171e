"""The ledger's promises for one guarded call, written inline: the least Python any
implementation of them pays, to tell the floor's ratio that a design can reach from the
one only SQLite can.

:func:`inline_call` does per call what the ledger must do and nothing it merely chooses
to do: a call id, each hook timed, the arguments and result as JSON with the redactor's
"nothing to redact" test, the canonical input hash, two ISO timestamps, the session's
state read in the first transaction (a halted session denies the call), one lock, and
the hook runs of each event as one JSON array; then the floor's two transactions. With
``runs_in_row`` the runs go into two extra columns of the call's own row (the schema a
ledger would need for it: added to this file only), else into ``hook_run_sets`` as the
ledger writes them today. No events, decisions, watch, group commit, spool or journal:
those are the framework's, and the difference to ``hookrails Ledger()`` is their cost.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any

from guardrails._canonical_json import input_hash, json_encoder
from guardrails.ledger.common import iso_time
from guardrails.ledger.sqlite import Ledger
from guardrails.ledger.sqlite_state import _READ as _STATE
from guardrails.ledger.sqlite_write import SQL

__all__ = ["inline_call"]

#: the ledger's own statements where the inline call does what the ledger does
_RUNS = SQL["hook_runs"]
#: the floor's shapes, with the runs' columns when they go into the call's row
_INSERT = (
    "INSERT INTO tool_calls (session_id, agent_name, tool_call_id, tool_name, "
    "tool_call_arguments, final_arguments, arguments_hash, decision, status, started_at, pid"
    "{runs_col}) VALUES (?, ?, ?, ?, ?, ?, ?, 'allow', 'pending', ?, ?{runs_val})"
)
_UPDATE = (
    "UPDATE tool_calls SET status = 'ok', tool_call_result = ?, result_bytes = ?, "
    "finished_at = ?, duration_ms = ?{runs_col} WHERE id = ?"
)

Hook = Callable[[Any, Any], Any]


def inline_call(
    conn: sqlite3.Connection,
    ledger: Ledger,
    tool: Callable[..., Any],
    tool_name: str,
    tool_input: dict[str, Any],
    pre: list[tuple[str, Hook]],
    post: list[tuple[str, Hook]],
    *,
    runs_in_row: bool,
) -> Callable[[Any], Any]:
    """A guarded call of ``tool`` on ``conn`` (autocommit, the ledger's pragmas and
    schema); ``ledger`` lends its redactor (its built-in kinds, as a default Ledger's)."""
    if runs_in_row:
        conn.execute("ALTER TABLE tool_calls ADD COLUMN pre_runs TEXT")
        conn.execute("ALTER TABLE tool_calls ADD COLUMN post_runs TEXT")
    insert = _INSERT.format(
        runs_col=", pre_runs" if runs_in_row else "", runs_val=", ?" if runs_in_row else ""
    )
    update = _UPDATE.format(runs_col=", post_runs = ?" if runs_in_row else "")
    ex = conn.execute
    encode = json_encoder(default=str)
    leaves, redact = ledger.redactor.leaves, ledger.redactor.redact
    lock = threading.Lock()
    perf = time.perf_counter
    now = time.time
    urandom = os.urandom
    pid = os.getpid()
    sid, agent = "inline-session", "bench"

    def timed(hooks: list[tuple[str, Hook]], value: Any) -> str:
        runs = []
        for name, hook in hooks:
            t0 = perf()
            hook(value, None)
            runs.append([name, tool_name, 100, "noop", (perf() - t0) * 1000, None, 0])
        return encode(runs)

    def call(_: Any) -> Any:
        call_id = "toolu_" + urandom(12).hex()
        pre_runs = timed(pre, tool_input)
        with lock:
            args = encode(tool_input)
            if not leaves(args):
                args = encode(redact(tool_input))
            digest = input_hash(tool_input)
            at = iso_time(now())
            ex("BEGIN IMMEDIATE")
            ex(_STATE, (sid, agent)).fetchone()
            params = [sid, agent, call_id, tool_name, args, args, digest, at, pid]
            if runs_in_row:
                params.append(pre_runs)
            rowid = ex(insert, params).lastrowid
            if not runs_in_row:
                ex(_RUNS, (sid, "PreToolUse", call_id, None, at, pre_runs, 0))
            ex("COMMIT")
        t0 = perf()
        out = tool(**tool_input)
        ms = (perf() - t0) * 1000
        post_runs = timed(post, out)
        with lock:
            result = encode(out)
            if not leaves(result):
                result = encode(redact(out))
            at = iso_time(now())
            ex("BEGIN IMMEDIATE")
            row = [result, len(result), at, ms]
            if runs_in_row:
                row.append(post_runs)
            ex(update, (*row, rowid))
            if not runs_in_row:
                ex(_RUNS, (sid, "PostToolUse", call_id, None, at, post_runs, 0))
            ex("COMMIT")
        return out

    return call
