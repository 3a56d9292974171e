"""The SQLite store's session state (``session_state``; see :mod:`.session_state`).

:func:`read_state` answers :meth:`Ledger.session_state <guardrails.Ledger.session_state>`;
:class:`Settle` runs inside the ``BEGIN IMMEDIATE`` transaction that records an event:
the write lock is held from its read to its write, so processes sharing the file settle
one event at a time (the injection budget is claimed atomically, and a PreToolUse
recorded after a halt is denied). The state is never spooled: while the file cannot be
written it stays per process (docs/design.md §7).
"""

from __future__ import annotations

import json

from .common import escape_surrogates, iso_time
from .session_state import SessionState, settle

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from ..results import Decision
    from .records import EventRows, Op
    from .session_state import Settled, StateChange

__all__ = ["Settle", "read_state"]

_READ = (
    "SELECT turn, halted, injected_chars, prompt_id, earlier_prompts FROM session_state "
    "WHERE session_id = ? AND agent_name = ?"
)
_WRITE = (
    "INSERT INTO session_state (session_id, agent_name, turn, turn_started_at, halted, "
    "injected_chars, prompt_id, earlier_prompts, updated_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (session_id, agent_name) DO UPDATE SET turn = excluded.turn, "
    "turn_started_at = coalesce(excluded.turn_started_at, session_state.turn_started_at), "
    "halted = excluded.halted, injected_chars = excluded.injected_chars, "
    "prompt_id = excluded.prompt_id, earlier_prompts = excluded.earlier_prompts, "
    "updated_at = excluded.updated_at"
)


def read_state(conn: sqlite3.Connection, session_id: str, agent: str) -> SessionState | None:
    """The state of ``session_id`` for ``agent`` (None: it has none yet)."""
    row = _run(conn, _READ, (session_id, agent)).fetchone()
    if row is None:
        return None
    return SessionState(row[0], row[1], row[2], row[3], _earlier(row[4]))


def _earlier(text: str | None) -> tuple[str, ...]:
    """The earlier prompt ids from their JSON (anything else reads as none)."""
    if not text:
        return ()
    try:
        ids = json.loads(text)
    except ValueError:
        return ()
    return tuple(i for i in ids if type(i) is str) if type(ids) is list else ()


def _run(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
    """Run ``sql``; strings SQLite refuses (lone surrogates) go as their escapes, as the
    event's rows do (:func:`.records.escape_ops`), so the keys match."""
    try:
        return conn.execute(sql, params)
    except UnicodeEncodeError:
        return conn.execute(sql, [escape_surrogates(p) if type(p) is str else p for p in params])


class Settle:
    """Settles one event's :class:`StateChange` inside its record's transaction: called with
    the connection and the event's rows, it returns the rows to write (made again when the
    decision changed: a halted session's call denied, context cut to the budget left)."""

    __slots__ = (
        "agent", "change", "decision", "now", "ops", "owner_pid", "remade", "rows", "settled",
        "tenant",
    )  # fmt: skip

    def __init__(
        self,
        rows: EventRows,
        decision: Decision,
        change: StateChange,
        now: float,
        agent: str,
        tenant: str | None,
        owner_pid: int | None,
        ops: list[Op],
    ) -> None:
        self.rows = rows
        self.decision = decision
        self.change = change
        self.now = now
        self.agent = agent
        self.tenant = tenant
        self.owner_pid = owner_pid
        #: the event's rows as last made (what a failed write spools)
        self.ops = ops
        #: the outcome, once a transaction settled it
        self.settled: Settled | None = None
        #: an attempt changed the decision (its transaction may have rolled back since)
        self.remade = False

    def read(self, conn: Any, session_id: str, agent: str) -> SessionState | None:
        """The state before this event, the write lock held (a server store locks the row)."""
        return read_state(conn, session_id, agent)

    def write(self, conn: Any, params: tuple[Any, ...]) -> None:
        """Upsert the new state: ``(session, agent, turn, turn started, halted, injected,
        prompt id, earlier prompt ids JSON, now)``."""
        _run(conn, _WRITE, params)

    def __call__(self, conn: Any, ops: list[Op]) -> list[Op]:
        d = self.decision
        sid = d.event.session_id
        change = self.change
        before = self.read(conn, sid, self.agent)
        settled = settle(before, change)
        # A decision changed here stays changed when this transaction rolls back and is
        # tried again (a batch written again one by one, escaped text): what the change
        # asks of the store shrinks to what the decision still holds, and the rows are
        # made from the decision, whatever the next attempt reads.
        if settled.refused is not None:
            d.refuse_halted(settled.refused)
            change.gate, change.inject = False, 0
            self.remade = True
        elif settled.granted < change.inject:
            d.cut_context(settled.granted)
            change.inject = settled.granted
            self.remade = True
        if self.remade:
            ops = self.ops = self.rows.ops(
                d,
                self.now,
                agent=self.agent,
                tenant=self.tenant,
                owner_pid=self.owner_pid,
                session_row=bool(ops) and ops[0][0] == "session",
            )
        if settled.changed:
            state = settled.state
            at = iso_time(self.now)
            began = at if state.turn != (0 if before is None else before.turn) else None
            earlier = json.dumps(list(state.earlier), ensure_ascii=False) if state.earlier else None
            self.write(
                conn,
                (sid, self.agent, state.turn, began, state.halted, state.injected, state.prompt,
                 earlier, at),
            )  # fmt: skip
        self.settled = settled
        return ops
