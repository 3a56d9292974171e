"""The store interface: what hookrails needs from a ledger, whatever keeps it.

:class:`~guardrails.ledger.sqlite.Ledger` (a SQLite file) implements it; a server
database can implement it too. Everything crosses it as plain Python values
(decisions, strings, numbers, the dataclasses below): no connection or cursor.
Failures are :class:`~guardrails.LedgerError`; a write that only records (``record``)
never raises for the file, it spools.

``Store`` and ``StoreReader`` are :class:`typing.Protocol` classes that exist for the
type checker only (``typing`` costs a hook process ~3 ms): annotate with them under
``TYPE_CHECKING``. The idempotency value types and :func:`judge` are real: the
idempotency built-in, its in-memory store and every ledger store share them.

**Idempotency keys.** :meth:`Store.claim_key` decides, in one transaction, what a
key means for a new call (:data:`Verdict`):

* ``claimed``: the key is this call's: it was free (absent, expired, failed, or its
  call will never finish) and is now ``in_progress`` under this call, or this call
  held it already (the same call decided again).
* ``completed``: an identical call finished within the TTL; ``stored.result`` is its
  stored result (the caller may replay it).
* ``conflict``: the tool declares key fields and the call under this key had other
  arguments (``stored.tool_input`` when the store knows them).
* ``in_progress``: an identical call holds the key and may still be running.

A store decides "will never finish" its own way: SQLite looks at the claim's
``tool_calls`` row (denied, failed, interrupted, or its process gone); a server store
may give claims a lease instead; :func:`judge_held` is what every ledger store makes of
the answer. :meth:`Store.complete_key` / :meth:`Store.fail_key`
end a claim; :meth:`Store.release_key` gives one up without an outcome;
:meth:`Store.prune_keys` deletes expired ones.

**Session state** (:mod:`.session_state`). What a session remembers between events
(its turn, a halt, the context injected this turn) is kept per (session, agent), since
a Claude Code command hook is a new process per event. :meth:`Store.session_state` reads
it (once per session per process, before a PreToolUse's hooks). :meth:`Store.record`
with a ``change`` settles it in the transaction that records the event: read the state
holding the write lock (a server store: ``SELECT ... FOR UPDATE``), apply
:func:`~.session_state.settle`, change the decision when the outcome says so
(``Decision.refuse_halted``, ``Decision.cut_context``) before its rows are made, write
the new state with ``turn_started_at`` at a new turn, and return the
:class:`~.session_state.Settled` outcome. A change that cannot be written (the record
spools) returns ``None``: the state is never spooled, since replaying it later could halt
a turn that has moved on.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any, Literal, Protocol

    from .._redaction import Redactor
    from ..results import Decision
    from .session_state import SessionState, Settled, StateChange
    from .spool import RecoverReport

    Verdict = Literal["claimed", "completed", "conflict", "in_progress"]

__all__ = [
    "ENDED", "ClaimResult", "KeyClaim", "StoredKey", "earlier_input", "held_elsewhere", "judge",
    "judge_held",
]  # fmt: skip

#: ``tool_calls`` statuses that mean a claim's call is not running and never will
ENDED = frozenset({"denied", "error", "interrupted"})


@dataclass(slots=True)
class KeyClaim:
    """A call asking for its idempotency key (times as epoch seconds)."""

    key: str
    scope: str
    session_id: str
    agent_id: str | None
    tool_name: str
    payload_hash: str
    tool_call_id: str | None
    #: the key comes from the tool's declared key fields (else from all its input)
    declared: bool
    now: float
    expires: float | None
    tool_input: dict[str, Any]


@dataclass(slots=True)
class StoredKey:
    """A key as a store holds it (times as epoch seconds; ``result`` is JSON text)."""

    state: str
    payload_hash: str
    tool_call_id: str | None
    session_id: str | None
    result: str | None
    created: float
    expires: float | None
    #: the earlier call's input when known (for the conflict message)
    tool_input: dict[str, Any] | None = None


@dataclass(slots=True)
class ClaimResult:
    verdict: Verdict
    #: the key met in the store (None when the claim took it)
    stored: StoredKey | None = None


def judge(row: StoredKey, c: KeyClaim) -> Verdict | Literal["reclaim"]:
    """What an existing key means for claim ``c``: ``reclaim`` (expired or failed: free
    to claim), ``claimed`` (the same call decided again: it holds the key already), else
    the verdict it stands for."""
    if c.tool_call_id is not None and row.tool_call_id == c.tool_call_id:
        return "claimed"
    if row.expires is not None and row.expires <= c.now:
        return "reclaim"
    if row.state == "failed":
        return "reclaim"
    if c.declared and row.payload_hash != c.payload_hash:
        return "conflict"
    return "completed" if row.state == "completed" else "in_progress"


def held_elsewhere(row: StoredKey, c: KeyClaim) -> bool:
    """Whether ``row`` is another call's claim still in progress: then what a store knows
    of that call (its ``tool_calls`` row, its holder) decides the key (:func:`judge_held`)."""
    return row.state == "in_progress" and row.tool_call_id != c.tool_call_id


def judge_held(
    row: StoredKey, c: KeyClaim, call: Sequence[Any] | None, gone: bool
) -> tuple[Verdict | Literal["reclaim"], bool]:
    """:func:`judge` for a key a ledger store met, one rule for every engine (no SQL here).

    When ``row`` is :func:`held_elsewhere`, the store looked up its call: ``call`` is that
    ``tool_calls`` row (status, result, arguments, ...; None: no row), and ``gone`` says
    whether the call's holder will never finish it, by the store's own test (SQLite: its
    process is gone; a server store: its lease ran out). A call that ended (denied,
    failed, interrupted) or whose holder is gone frees the key (``reclaim``); one that
    finished ``ok`` without its PostToolUse counts as completed: ``row`` then says so,
    with the call's result, and the second value is True for the store to write that.
    Otherwise ``call`` and ``gone`` are not read."""
    if not held_elsewhere(row, c):
        return judge(row, c), False
    status = None if call is None else call[0]
    if status in ENDED:
        return "reclaim", False
    if call is not None and status == "ok":
        row.state, row.result = "completed", call[1]
        return judge(row, c), True
    if gone:
        return "reclaim", False
    return judge(row, c), False


def earlier_input(call: Sequence[Any] | None) -> Any:
    """The input of the call holding a key, from its ``tool_calls`` row (for a conflict's
    message): its JSON, the text when that is not JSON, None when unknown."""
    if call is None or not call[2]:
        return None
    import json

    try:
        return json.loads(call[2])
    except ValueError:
        return call[2]


if TYPE_CHECKING:

    class StoreReader(Protocol):
        """Read access to what earlier events committed (``ctx.ledger`` in a hook)."""

        path: str

        def query(
            self, sql: str, params: Sequence[Any] | dict[str, Any] = ()
        ) -> list[dict[str, Any]]:
            """Run one read-only statement: its rows as dicts."""

        def value(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any: ...

        def succeeded(self, tool: str, session_id: str) -> bool: ...

        def calls(
            self, session_id: str, tool: str = "*", status: str | None = None
        ) -> list[dict[str, Any]]: ...

        def count_failures(self, session_id: str, tool: str, arguments_hash: str) -> int: ...

        def count_injected(
            self, session_id: str, tool: str, arguments_hash: str, hook: str
        ) -> int: ...

        def succeeded_tools(self, session_id: str) -> list[str]: ...

        def stop_blocks_in_a_row(
            self, session_id: str, event_name: str, agent_id: str | None, limit: int
        ) -> int:
            """Consecutive blocked ``event_name`` events of a session and agent."""

        def hook_blocks_in_a_row(
            self, session_id: str, event_name: str, hook: str, agent_id: str | None, limit: int
        ) -> int: ...

        def session_tool_totals(self, session_id: str) -> list[dict[str, Any]]: ...

        def session_calls(
            self, session_id: str, after_id: int | None = None
        ) -> list[dict[str, Any]]: ...

        def has_session(self, session_id: str) -> bool: ...

        def session_call_counts(self, session_id: str) -> list[dict[str, Any]]: ...

        def session_stop_decisions(self, session_id: str) -> list[dict[str, Any]]: ...

        def session_hook_refusals(self, session_id: str) -> list[dict[str, Any]]: ...

        def stats(self, limit: int) -> Iterator[tuple[str, list[dict[str, Any]]]]: ...

        def close(self) -> None: ...

    class Store(Protocol):
        """A ledger: records events, keeps idempotency keys, recovers its spool."""

        #: where it is (a file path for SQLite)
        path: str
        #: why records go to the spool instead of the store (None: all is well)
        degraded: str | None

        @property
        def redactor(self) -> Redactor:
            """What every write goes through (results stored for replay too)."""

        @property
        def reader(self) -> StoreReader: ...

        def record(
            self,
            decision: Decision,
            now: float,
            *,
            agent: str,
            tenant: str | None,
            owner_pid: int | None = None,
            change: StateChange | None = None,
        ) -> Settled | None:
            """Write one event, its hook runs and its decision, in one transaction (or
            to the spool when the store cannot be written), settling ``change`` to the
            session's state in it (see above); the outcome, or ``None``."""

        def session_state(self, session_id: str, agent: str) -> SessionState | None:
            """The session's state as committed (``None``: none yet); ``LedgerError`` when
            it cannot be read."""

        def mark_interrupted(
            self, session_id: str, tool_call_id: str, reason: str, now: float
        ) -> None:
            """A ``pending`` call that will not run becomes ``interrupted``, with why."""

        def claim_key(self, claim: KeyClaim) -> ClaimResult: ...

        def complete_key(
            self, key: str, tool_call_id: str | None, result: str, now: float, *, exact: bool
        ) -> None:
            """The call holding ``key`` finished; ``result`` (JSON) may be replayed.
            ``exact=False``: the key was recomputed and may differ, so a claim of
            ``tool_call_id`` under another key is ended instead."""

        def fail_key(
            self, key: str, tool_call_id: str | None, error: str, now: float, *, exact: bool
        ) -> None:
            """The call holding ``key`` failed: the next identical call claims it."""

        def release_key(self, key: str, tool_call_id: str | None) -> bool:
            """Give up ``tool_call_id``'s in-progress claim without an outcome."""

        def prune_keys(self, now: float, limit: int) -> int:
            """Delete up to ``limit`` keys expired by ``now``; how many went."""

        def recover(
            self, *, older_than: float | None = None, now: float | None = None
        ) -> RecoverReport:
            """Import the spool, then mark calls that will never finish interrupted."""

        def close(self) -> None: ...
