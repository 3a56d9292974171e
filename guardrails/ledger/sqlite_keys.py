"""Idempotency keys in a SQLite ledger: the ``idempotency_keys`` table.

Each function runs inside the caller's ``BEGIN IMMEDIATE`` transaction
(:meth:`Ledger.write_transaction <guardrails.ledger.sqlite.Ledger.write_transaction>`),
so processes sharing the file agree on a single owner: a claim is one
``INSERT OR IGNORE``, and a key met there is judged (:func:`~.store.judge_held`) before
anything else can change it. A claim whose call will never finish (its ``tool_calls``
row was denied, failed or interrupted, or its process is gone) is taken over; one
whose call finished ``ok`` without its PostToolUse counts as completed.
"""

from __future__ import annotations

import calendar
import itertools
import os
import time

from ..errors import LedgerError
from .common import iso_time, process_alive
from .store import ClaimResult, StoredKey, earlier_input, held_elsewhere, judge_held

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from .store import KeyClaim

__all__ = ["SWEEP_BATCH", "SWEEP_EVERY", "claim", "finish", "prune", "release"]

#: every SWEEP_EVERY-th new claim of a process deletes up to SWEEP_BATCH expired ones
SWEEP_EVERY = 256
SWEEP_BATCH = 256
_claims = itertools.count(1)

_INSERT = (
    "INSERT OR IGNORE INTO idempotency_keys (key, scope, session_id, agent_id, tool_name, "
    "payload_hash, state, tool_call_id, result, created_at, updated_at, expires_at) "
    "VALUES (?, ?, ?, ?, ?, ?, 'in_progress', ?, NULL, ?, ?, ?)"
)
_SELECT = (
    "SELECT state, payload_hash, tool_call_id, session_id, result, created_at, expires_at "
    "FROM idempotency_keys WHERE key = ?"
)
_RECLAIM = (
    "UPDATE idempotency_keys SET scope = ?, session_id = ?, agent_id = ?, tool_name = ?, "
    "payload_hash = ?, state = 'in_progress', tool_call_id = ?, result = NULL, "
    "created_at = ?, updated_at = ?, expires_at = ? WHERE key = ?"
)
_COMPLETED_BY_CALL = (
    "UPDATE idempotency_keys SET state = 'completed', result = ?, updated_at = ? WHERE key = ?"
)
_FINISH = (
    "UPDATE idempotency_keys SET state = ?, result = ?, updated_at = ? "
    "WHERE key = ? AND tool_call_id IS ? AND state = 'in_progress'"
)
_FINISH_BY_CALL = (
    "UPDATE idempotency_keys SET state = ?, result = ?, updated_at = ? "
    "WHERE tool_call_id = ? AND state = 'in_progress'"
)
_RELEASE = (
    "DELETE FROM idempotency_keys WHERE key = ? AND tool_call_id IS ? AND state = 'in_progress'"
)
#: expired claims count as absent: now and then a claim deletes a batch of them, so the
#: table stays bounded without ``hookrails ledger prune`` (uses the expiry index)
_SWEEP = (
    "DELETE FROM idempotency_keys WHERE key IN (SELECT key FROM idempotency_keys "
    "WHERE expires_at < ? ORDER BY expires_at LIMIT ?)"
)
_CALL = (
    "SELECT status, tool_call_result, tool_call_arguments, pid FROM tool_calls "
    "WHERE session_id = ? AND tool_call_id = ?"
)


def claim(conn: sqlite3.Connection, c: KeyClaim, path: str) -> ClaimResult:
    """Claim ``c.key`` for ``c``, or say why not (see :mod:`.store`)."""
    now = iso_time(c.now)
    expires = None if c.expires is None else iso_time(c.expires)
    cur = conn.execute(
        _INSERT,
        (c.key, c.scope, c.session_id, c.agent_id, c.tool_name, c.payload_hash,
         c.tool_call_id, now, now, expires),
    )  # fmt: skip
    if cur.rowcount == 1:
        if next(_claims) % SWEEP_EVERY == 0:
            prune(conn, c.now, SWEEP_BATCH)
        return ClaimResult("claimed")
    found = conn.execute(_SELECT, (c.key,)).fetchone()
    if found is None:  # cannot happen inside the transaction; be safe
        raise LedgerError("idempotency claim vanished", path=path)
    row = StoredKey(
        found[0],
        found[1],
        found[2],
        found[3],
        found[4],
        _epoch(found[5]),
        None if found[6] is None else _epoch(found[6]),
    )
    call = _call(conn, row) if held_elsewhere(row, c) else None
    verdict, finished = judge_held(row, c, call, call is not None and _orphaned(call))
    if finished:  # its call finished ok without our post
        conn.execute(_COMPLETED_BY_CALL, (row.result, now, c.key))
    if verdict == "reclaim":  # denied after the claim, failed, interrupted, crashed, expired
        conn.execute(
            _RECLAIM,
            (c.scope, c.session_id, c.agent_id, c.tool_name, c.payload_hash,
             c.tool_call_id, now, now, expires, c.key),
        )  # fmt: skip
        return ClaimResult("claimed")
    if verdict == "conflict":
        row.tool_input = earlier_input(call or _call(conn, row))
    return ClaimResult(verdict, row)


def finish(
    conn: sqlite3.Connection,
    key: str,
    call_id: str | None,
    state: str,
    result: str,
    now: float,
    exact: bool,
) -> None:
    """End ``call_id``'s in-progress claim of ``key`` as ``completed`` or ``failed``."""
    at = iso_time(now)
    cur = conn.execute(_FINISH, (state, result, at, key, call_id))
    if cur.rowcount == 0 and not exact and call_id is not None:
        # the key was recomputed from an input a later hook rewrote: find it by call
        conn.execute(_FINISH_BY_CALL, (state, result, at, call_id))


def release(conn: sqlite3.Connection, key: str, call_id: str | None) -> bool:
    """Drop ``call_id``'s in-progress claim of ``key``; whether there was one."""
    return bool(conn.execute(_RELEASE, (key, call_id)).rowcount)


def prune(conn: sqlite3.Connection, now: float, limit: int) -> int:
    """Delete up to ``limit`` keys that expired before ``now``, oldest first."""
    return int(conn.execute(_SWEEP, (iso_time(now), limit)).rowcount)


def _call(conn: sqlite3.Connection, row: StoredKey) -> tuple[Any, ...] | None:
    if row.tool_call_id is None or row.session_id is None:
        return None
    found = conn.execute(_CALL, (row.session_id, row.tool_call_id)).fetchone()
    return None if found is None else tuple(found)


def _orphaned(call: tuple[Any, ...]) -> bool:
    """A pending call whose process (this machine) is gone: it will never finish."""
    status, pid = call[0], call[3]
    if status != "pending" or pid is None or pid == os.getpid():
        return False
    return not process_alive(pid)


def _epoch(iso: str) -> float:
    seconds = calendar.timegm(time.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S"))
    frac = iso[20:23] if len(iso) > 22 and iso[19] == "." else "0"
    return seconds + int(frac) / 1000
