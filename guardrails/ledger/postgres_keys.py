"""Idempotency keys in a PostgreSQL ledger, for machines that share it.

A claim is one ``INSERT ... ON CONFLICT DO NOTHING RETURNING``: the machine whose row
went in holds the key. The others lock the row (``SELECT ... FOR UPDATE``) and judge it
as every ledger store does (:func:`~.store.judge_held`): a completed call's result is
replayed, another payload under the same key is a conflict, a call still in progress is
denied. An ``in_progress`` claim is taken over when its call will never finish: its
``tool_calls`` row was denied, failed or interrupted, or its lease (``lease_expires_at``,
set at the claim) ran out, since a process on another machine cannot be asked whether
it still runs. The row lock makes the takeover one machine's: the next one sees the
fresh lease.
"""

from __future__ import annotations

import itertools

from .common import iso_time
from .store import ClaimResult, StoredKey, earlier_input, held_elsewhere, judge_held

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import psycopg

    from .store import KeyClaim

    Conn = psycopg.Connection[tuple[Any, ...]]

__all__ = ["claim", "finish", "prune", "release"]

SWEEP_EVERY = 256
SWEEP_BATCH = 256
_claims = itertools.count(1)

_INSERT = (
    "INSERT INTO idempotency_keys (key, scope, session_id, agent_id, tool_name, "
    "payload_hash, state, tool_call_id, result, created_at, updated_at, expires_at, "
    "lease_expires_at) VALUES (%s, %s, %s, %s, %s, %s, 'in_progress', %s, NULL, %s, %s, %s, %s) "
    "ON CONFLICT (key) DO NOTHING RETURNING key"
)
_SELECT = (
    "SELECT state, payload_hash, tool_call_id, session_id, result, "
    "extract(epoch FROM created_at)::float8, extract(epoch FROM expires_at)::float8, "
    "extract(epoch FROM lease_expires_at)::float8 FROM idempotency_keys WHERE key = %s FOR UPDATE"
)
_RECLAIM = (
    "UPDATE idempotency_keys SET scope = %s, session_id = %s, agent_id = %s, tool_name = %s, "
    "payload_hash = %s, state = 'in_progress', tool_call_id = %s, result = NULL, "
    "created_at = %s, updated_at = %s, expires_at = %s, lease_expires_at = %s WHERE key = %s"
)
_COMPLETED_BY_CALL = (
    "UPDATE idempotency_keys SET state = 'completed', result = %s, updated_at = %s, "
    "lease_expires_at = NULL WHERE key = %s"
)
_FINISH = (
    "UPDATE idempotency_keys SET state = %s, result = %s, updated_at = %s, "
    "lease_expires_at = NULL "
    "WHERE key = %s AND tool_call_id IS NOT DISTINCT FROM %s AND state = 'in_progress'"
)
_FINISH_BY_CALL = (
    "UPDATE idempotency_keys SET state = %s, result = %s, updated_at = %s, "
    "lease_expires_at = NULL WHERE tool_call_id = %s AND state = 'in_progress'"
)
_RELEASE = (
    "DELETE FROM idempotency_keys WHERE key = %s "
    "AND tool_call_id IS NOT DISTINCT FROM %s AND state = 'in_progress'"
)
_SWEEP = (
    "DELETE FROM idempotency_keys WHERE key IN (SELECT key FROM idempotency_keys "
    "WHERE expires_at < %s ORDER BY expires_at LIMIT %s FOR UPDATE SKIP LOCKED)"
)
_CALL = (
    "SELECT status, tool_call_result::text, tool_call_arguments::text FROM tool_calls "
    "WHERE session_id = %s AND tool_call_id = %s"
)


def claim(conn: Conn, c: KeyClaim, lease: float) -> ClaimResult:
    """Claim ``c.key`` for ``c`` (inside the caller's transaction), or say why not.
    ``lease``: seconds an in-progress claim holds against a takeover."""
    now = iso_time(c.now)
    expires = None if c.expires is None else iso_time(c.expires)
    until = iso_time(c.now + lease)
    for _ in range(3):  # a key deleted between the insert and the select: insert again
        inserted = conn.execute(
            _INSERT,
            (c.key, c.scope, c.session_id, c.agent_id, c.tool_name, c.payload_hash,
             c.tool_call_id, now, now, expires, until),
        ).fetchone()  # fmt: skip
        if inserted is not None:
            if next(_claims) % SWEEP_EVERY == 0:
                prune(conn, c.now, SWEEP_BATCH)
            return ClaimResult("claimed")
        found = conn.execute(_SELECT, (c.key,)).fetchone()
        if found is not None:
            break
    else:
        from ..errors import LedgerError

        raise LedgerError("idempotency claim kept vanishing", kind="locked")
    row = StoredKey(found[0], found[1], found[2], found[3], found[4], found[5], found[6])
    lease_end = found[7]
    call = _call(conn, row) if held_elsewhere(row, c) else None
    gone = lease_end is not None and lease_end <= c.now  # its holder's lease ran out
    verdict, finished = judge_held(row, c, call, gone)
    if finished:  # its call finished ok without its post
        conn.execute(_COMPLETED_BY_CALL, (row.result, now, c.key))
    if verdict == "reclaim":  # denied after the claim, failed, interrupted, lease out, expired
        conn.execute(
            _RECLAIM,
            (c.scope, c.session_id, c.agent_id, c.tool_name, c.payload_hash,
             c.tool_call_id, now, now, expires, until, c.key),
        )  # fmt: skip
        return ClaimResult("claimed")
    if verdict == "conflict":
        row.tool_input = earlier_input(call or _call(conn, row))
    return ClaimResult(verdict, row)


def finish(
    conn: Conn, key: str, call_id: str | None, state: str, result: str, now: float, exact: bool
) -> None:
    """End ``call_id``'s in-progress claim of ``key`` as ``completed`` or ``failed``."""
    at = iso_time(now)
    cur = conn.execute(_FINISH, (state, result, at, key, call_id))
    if cur.rowcount == 0 and not exact and call_id is not None:
        conn.execute(_FINISH_BY_CALL, (state, result, at, call_id))


def release(conn: Conn, key: str, call_id: str | None) -> bool:
    """Drop ``call_id``'s in-progress claim of ``key``; whether there was one."""
    return bool(conn.execute(_RELEASE, (key, call_id)).rowcount)


def prune(conn: Conn, now: float, limit: int) -> int:
    """Delete up to ``limit`` keys that expired before ``now``, oldest first."""
    return int(conn.execute(_SWEEP, (iso_time(now), limit)).rowcount)


def _call(conn: Conn, row: StoredKey) -> tuple[Any, ...] | None:
    if row.tool_call_id is None or row.session_id is None:
        return None
    found = conn.execute(_CALL, (row.session_id, row.tool_call_id)).fetchone()
    return None if found is None else tuple(found)
