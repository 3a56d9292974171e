"""The PostgreSQL store: one ledger a fleet of machines writes (``postgresql://`` URLs).

``Ledger("postgresql://…")`` (and ``ledger: postgresql://…`` in a definition,
``--ledger``, ``$HOOKRAILS_LEDGER``) makes a :class:`PostgresLedger`: ``Ledger``
dispatches on the location (:meth:`Ledger.__new__ <guardrails.ledger.sqlite.Ledger>`),
so users keep calling ``Ledger`` and a Guard treats both alike. This module, psycopg
and psycopg-pool are imported only then (the ``postgres`` extra): a SQLite ledger
never pays for them.

It implements :class:`~guardrails.ledger.store.Store` as the SQLite store does: one
transaction per event (:mod:`.postgres_write`), the session's state locked from its
read to its write, idempotency claims that machines agree on (:mod:`.postgres_keys`),
the same tables, views and saved queries (:mod:`.postgres_schema`). When the server
cannot be reached, records go to the local spool (:mod:`.spool`, in the temp folder,
named after the URL) and :meth:`recover` imports them once it is back; an idempotency
claim then raises :class:`~guardrails.LedgerError`, which the built-in turns into a
denial (it fails closed).
"""

from __future__ import annotations

import os
import time

from ..errors import LedgerError
from . import postgres_write as pgw
from .common import logger, safe_url
from .sqlite import DEFAULT_MAX_ARGUMENTS, DEFAULT_MAX_OUTPUT, Ledger
from .sqlite_group import WriterLock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any, TypeVar

    import psycopg
    from psycopg_pool import ConnectionPool

    from ..definition.model import AgentDefinition
    from ..results import Decision
    from .postgres_reader import PostgresReader
    from .records import Op
    from .session_state import SessionState, Settled, StateChange
    from .spool import RecoverReport
    from .store import ClaimResult, KeyClaim

    T = TypeVar("T")

__all__ = ["DEFAULT_CLAIM_LEASE", "PostgresLedger"]

#: seconds an in-progress idempotency claim holds before another machine may take it over
DEFAULT_CLAIM_LEASE = 900.0
_REOPEN_INTERVAL = 1.0


class PostgresLedger(Ledger):
    """A ledger in a PostgreSQL database (15 or later), shared by every machine given the URL.

    Takes :class:`~guardrails.ledger.sqlite.Ledger`'s options (``durable`` and
    ``busy_timeout`` mean nothing here) and: ``connect_timeout`` (seconds to reach the
    server before records spool), ``pool_size`` (connections kept, psycopg-pool),
    ``claim_lease`` (seconds an in-progress idempotency claim holds against a takeover:
    set it above the longest tool call). The schema is created or migrated on first use.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        definition: AgentDefinition | None = None,
        durable: bool = False,
        busy_timeout: float = 5.0,
        max_output: int = DEFAULT_MAX_OUTPUT,
        max_arguments: int = DEFAULT_MAX_ARGUMENTS,
        redact_patterns: Iterable[str] = (),
        connect_timeout: float = 5.0,
        pool_size: int = 4,
        claim_lease: float = DEFAULT_CLAIM_LEASE,
    ) -> None:
        from .._redaction import Redactor
        from .common import resolve_ledger_path
        from .records import EventRows

        self.path = resolve_ledger_path(path, definition)
        self._unbound = False
        self._override_for = definition if path is not None else None
        self.durable = durable
        self.busy_timeout = busy_timeout
        self.connect_timeout = connect_timeout
        self.pool_size = pool_size
        self.claim_lease = claim_lease
        self._rows = EventRows(Redactor(tuple(redact_patterns)), max_output, max_arguments)
        self._lock = WriterLock()
        self._pool: ConnectionPool[Any] | None = None
        self._degraded: str | None = None
        self._kind: str | None = None
        self._reopen_at = 0.0
        self._reader: PostgresReader | None = None
        self._open()

    def __repr__(self) -> str:
        return f"Ledger({safe_url(self.path)!r})"

    # --- opening -----------------------------------------------------------------------

    def _open(self) -> None:
        """Open the pool and bring the schema up to date, or degrade (records spool)."""
        import psycopg
        from psycopg_pool import ConnectionPool, PoolTimeout

        from . import migrations
        from .postgres_schema import apply_migrations, schema_version

        self._unbound = False
        settings: dict[str, Any] = {
            "autocommit": True,
            "connect_timeout": max(1, int(self.connect_timeout)),
            "options": "-c TimeZone=UTC",
            "application_name": "hookrails",
        }
        # one plain connection first: a server that refuses fails it at once, with its own
        # words, where the pool would retry for the whole timeout (under the writer's lock,
        # every event's write waited that long while the server was down)
        try:
            with psycopg.connect(self.path, **settings) as conn:
                version = schema_version(conn)
                latest = migrations.latest_version("postgres")
                if version > latest:
                    self._degrade(
                        LedgerError(
                            f"this ledger has schema version {version}, newer than this "
                            f"hookrails knows ({latest}); upgrade hookrails to write to it",
                            kind="newer_schema",
                        )
                    )
                    return
                if version < latest:
                    apply_migrations(conn)
        except (psycopg.Error, OSError) as exc:
            self._degrade(exc, _kind(exc))
            return
        pool: ConnectionPool[Any] = ConnectionPool(
            self.path,
            min_size=1,
            max_size=max(1, self.pool_size),
            kwargs=settings,
            open=False,
            timeout=self.connect_timeout,
            reconnect_timeout=60.0,
            name="hookrails-ledger",
        )
        try:
            pool.open(wait=True, timeout=self.connect_timeout)
        except (psycopg.Error, PoolTimeout, OSError) as exc:
            pool.close()
            self._degrade(exc, _kind(exc))
            return
        self._pool = pool

    def _close_connection(self) -> None:
        if self._pool is not None:
            try:  # noqa: SIM105
                self._pool.close()
            except Exception:
                pass
            self._pool = None

    def close(self, *, checkpoint: bool = True) -> None:
        """Close the pool (``checkpoint`` is SQLite's: the server checkpoints itself)."""
        with self._lock:
            self._close_connection()
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _bind(self, definition: AgentDefinition | None) -> None:
        """Always bound: a URL was given."""

    @property
    def reader(self) -> PostgresReader:
        from .postgres_reader import PostgresReader

        if self._reader is None:
            self._reader = PostgresReader(self.path)
        return self._reader

    @property
    def spool_path(self) -> str:
        from .spool import spool_path

        return spool_path(self.path)

    @staticmethod
    def _error_kind(exc: BaseException) -> str:
        return _kind(exc)

    # --- writing ---------------------------------------------------------------------

    def _pool_or_reopen(self) -> ConnectionPool[Any] | None:
        if self._pool is None and time.monotonic() >= self._reopen_at:
            self._open()
        return self._pool

    def _write(self, ops: list[Op], settle: Any = None) -> bool:
        """Commit ``ops`` (settling the session's state), or spool them; whether committed."""
        import psycopg
        from psycopg_pool import PoolTimeout

        from .spool import append

        with self._lock:
            pool = self._pool_or_reopen()
        if pool is None:
            append(self.path, ops)
            return False
        try:
            with pool.connection() as conn:
                pgw.commit(conn, ops, settle)
        except (psycopg.Error, PoolTimeout, OSError, ValueError, TypeError) as exc:
            if settle is not None:
                ops = settle.ops
            with self._lock:
                if isinstance(exc, psycopg.OperationalError | PoolTimeout | OSError):
                    self._close_connection()  # reopened (and the server asked) once a second
                self._degrade(exc)
            append(self.path, ops)
            return False
        if self._degraded is not None:
            logger().info("hookrails ledger %s is writable again", safe_url(self.path))
            self._degraded = self._kind = None
        return True

    def write_behind(self, delay: float = 0.005, max_age: float = 0.05) -> None:
        """Not for PostgreSQL: its journal is the spool a hook process ships through
        ``serve``; each write here is already one round trip."""
        raise LedgerError(
            "write-behind is for SQLite ledgers; a PostgreSQL one records each event in "
            "its own transaction",
            path=safe_url(self.path),
        )

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
        ops = self._rows.ops(decision, now, agent=agent, tenant=tenant, owner_pid=owner_pid)
        if change is None or not change.active:
            self._write(ops)
            return None
        if change.halt is not None:
            change.halt = self._rows.redactor.redact_text(change.halt)
        settle = pgw.Settle(self._rows, decision, change, now, agent, tenant, owner_pid, ops)
        return settle.settled if self._write(ops, settle) else None

    def _run(self, fn: Callable[[psycopg.Connection[Any]], T]) -> T:
        """``fn(conn)`` in one transaction; :class:`LedgerError` when the server cannot be
        reached (the caller decides whether that fails open or closed)."""
        import psycopg
        from psycopg_pool import PoolTimeout

        with self._lock:
            pool = self._pool_or_reopen()
        if pool is None:
            raise LedgerError(
                f"the ledger cannot be written ({self._degraded})",
                path=safe_url(self.path),
                kind="degraded",
            )
        try:
            with pool.connection() as conn, conn.transaction():
                return fn(conn)
        except (psycopg.Error, PoolTimeout) as exc:
            if isinstance(exc, psycopg.OperationalError | PoolTimeout):
                with self._lock:
                    self._close_connection()
                    self._degrade(exc)
            raise LedgerError(
                (str(exc).strip().splitlines() or [type(exc).__name__])[0],
                path=safe_url(self.path),
                kind=_kind(exc),
            ) from exc

    def session_state(self, session_id: str, agent: str) -> SessionState | None:
        return self._run(lambda conn: pgw.read_state(conn, session_id, agent))

    def write_transaction(self) -> Any:
        raise LedgerError(
            "a PostgreSQL ledger has no SQLite write transaction; use its named methods",
            path=safe_url(self.path),
        )

    def mark_interrupted(self, session_id: str, tool_call_id: str, reason: str, now: float) -> None:
        from .common import iso_time

        text = self.redactor.redact_text(reason)
        self._run(
            lambda conn: conn.execute(
                "UPDATE tool_calls SET status = 'interrupted', finished_at = %s, "
                "error_message = %s WHERE session_id = %s AND tool_call_id = %s "
                "AND status = 'pending'",
                (iso_time(now), text, session_id, tool_call_id),
            )
        )

    # --- idempotency keys ---------------------------------------------------------------

    def claim_key(self, claim: KeyClaim) -> ClaimResult:
        from . import postgres_keys

        return self._run(lambda conn: postgres_keys.claim(conn, claim, self.claim_lease))

    def _keys(self, op: str, *args: Any) -> Any:
        """``postgres_keys.<op>(conn, *args)``: finish, release and prune, as the SQLite
        store's ``sqlite_keys``."""
        from . import postgres_keys

        return self._run(lambda conn: getattr(postgres_keys, op)(conn, *args))

    # --- recovery ---------------------------------------------------------------------

    def recover(
        self, *, older_than: float | None = None, now: float | None = None
    ) -> RecoverReport:
        """Import the spool (records written while the server could not be reached), then
        mark ``pending`` calls that started more than ``older_than`` seconds ago
        ``interrupted``. Unlike SQLite it never asks whether a call's process runs: the
        process may be on another machine."""
        from .postgres_admin import import_spools, mark_stale

        with self._lock:
            if self._pool is None or self._degraded is not None:
                self._close_connection()
                self._open()
            pool = self._pool
        if pool is None:
            raise LedgerError(
                f"cannot recover into this ledger ({self._degraded}): fix the cause and run "
                "recover again; the spooled records stay where they are",
                path=safe_url(self.path),
                kind=self._kind or "error",
            )
        with pool.connection() as conn:
            report = import_spools(conn, self.path)
            report.interrupted = mark_stale(conn, older_than, now)
        self._degraded = self._kind = None
        return report


def _kind(exc: BaseException) -> str:
    """The :class:`LedgerError` kind of a driver error."""
    if isinstance(exc, LedgerError):
        return exc.kind
    text = str(exc).lower()
    if "read-only" in text or "permission denied" in text:
        return "read_only"
    if "could not extend" in text or "no space" in text or "disk full" in text:
        return "full"
    return "unreachable" if "connect" in text or "timeout" in text else "error"
