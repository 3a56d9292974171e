"""The SQLite store: a ledger file with every call, decision and hook run.

Writes take the hot path: stdlib ``sqlite3``, WAL, ``synchronous=NORMAL`` (``durable``: FULL),
one ``BEGIN IMMEDIATE`` transaction per event (events queued behind a writer: one for all,
:mod:`.sqlite_group`), checkpoints on a thread (:mod:`.sqlite_checkpoint`). sqlite-utils only
applies migrations and serves the read side. When the file cannot be written (read-only, full,
corrupt, locked past the timeout, a newer schema) the Guard keeps guarding and the records go
to a JSONL spool beside the database (:mod:`.spool`); ``recover()`` imports them later
(:mod:`.sqlite_recover`). After a commit (at most once a millisecond, and on close)
:mod:`.sqlite_watch` checks that the file and its WAL are still the ones at the path: a file
deleted or replaced under the writer is followed (:meth:`Ledger._follow`), never written into
unseen.

:class:`Ledger` implements :class:`~guardrails.ledger.store.Store`; what it writes for an event
comes from :mod:`.records`, its idempotency keys live in :mod:`.sqlite_keys`, the schema in
:mod:`.migrations`.

A hook process may open a Ledger for an event, so this module imports no more than it needs:
``logging``, ``pathlib``, ``threading``, ``typing`` and the like load where used.
"""

from __future__ import annotations

import os
import sqlite3
import time

from ..errors import LedgerError
from . import migrations
from .common import (
    ENV_VAR,
    check_definition_ledger,
    error_kind,
    is_url,
    iso_time,
    logger,
    open_failure_kind,
    postgres_ledger_class,
    resolve_ledger_path,
    safe_url,
)
from .journal import Poll as JournalPoll
from .journal import halts_folder as _halts_folder
from .journal import waiting as _journal_waiting
from .reader import LedgerReader
from .records import EventRows
from .session_state import JOURNALED
from .sqlite_checkpoint import Checkpointer
from .sqlite_group import WriterLock
from .sqlite_state import Settle, read_state
from .sqlite_watch import Watch, already_there
from .sqlite_write import begin as _begin
from .sqlite_write import commit as _commit
from .sqlite_write import commit_many as _commit_many
from .sqlite_write import is_busy
from .sqlite_write import rollback as _rollback

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from contextlib import AbstractContextManager
    from typing import Any

    from .._redaction import Redactor
    from ..definition.model import AgentDefinition
    from ..results import Decision
    from .records import Op
    from .session_state import SessionState, Settled, StateChange
    from .spool import RecoverReport
    from .sqlite_behind import Behind
    from .store import ClaimResult, KeyClaim, Store, StoreReader

__all__ = ["DEFAULT_MAX_ARGUMENTS", "DEFAULT_MAX_OUTPUT", "Ledger"]


DEFAULT_MAX_OUTPUT = 64 * 1024
DEFAULT_MAX_ARGUMENTS = 64 * 1024
#: seconds between attempts to reopen a file that could not be opened
_REOPEN_INTERVAL = 1.0
#: ledgers whose newer schema this process has already reported (once per process)
_REPORTED_NEWER: set[str] = set()
#: connections closed with ``checkpoint=False``: held until the process ends
_KEPT_OPEN: list[sqlite3.Connection] = []


def _catch_up(conn: sqlite3.Connection, path: str, timeout: float, opened: bool = False) -> None:
    if (opened and not os.path.isdir(_halts_folder(path))) or _journal_waiting(path):
        from .journal_import import catch_up  # loaded only when there is something to do

        catch_up(conn, path, timeout, opened)


def _caps(name: str) -> property:
    """A property passed through to the Ledger's :class:`~.records.EventRows`."""
    return property(
        lambda self: getattr(self._rows, name), lambda self, v: setattr(self._rows, name, v)
    )


class Ledger:
    """A ledger file. ``Guard(definition, ledger=Ledger("ledger.db"))`` records into it.

    ``path``: see :func:`~guardrails.ledger.resolve_ledger_path`. Given no path, no
    ``definition`` and no ``$HOOKRAILS_LEDGER``, the file is chosen by the first Guard
    it is given: its definition's ``ledger:`` key, else ``.hookrails/ledger.db``
    (:meth:`adopt`); it opens then, or when first used without a Guard. ``durable``:
    ``synchronous=FULL``. ``busy_timeout``: seconds a write waits for another writer
    before it spools. ``max_output``: UTF-8 bytes of a tool result's (or event
    payload's) JSON kept; a longer one is stored as a truncation marker (its size, its
    sha256 and its beginning, :func:`~guardrails.ledger.records.truncation_marker`),
    ``result_truncated`` says so and ``result_bytes`` keeps the size.
    ``max_arguments``: the same for tool arguments (as sent and as run) and
    annotations; ``arguments_hash`` stays the hash of the whole input.
    ``redact_patterns``: extra regexes to mask (see
    :class:`~guardrails._redaction.Redactor`); tool inputs, outputs, payloads, reasons
    and error messages are redacted before anything is written, spool included.

    A ``postgresql://`` URL (given, in ``$HOOKRAILS_LEDGER`` or in the definition's
    ``ledger:``) makes a :class:`~guardrails.ledger.postgres.PostgresLedger`, a subclass
    that keeps the ledger in PostgreSQL (the ``postgres`` extra); it takes more options
    (``connect_timeout``, ``pool_size``, ``claim_lease``).
    """

    def __new__(cls, path: str | os.PathLike[str] | None = None, **options: Any) -> Ledger:
        asks = path is not None or options.get("definition") or is_url(os.environ.get(ENV_VAR))
        if cls is Ledger and asks and is_url(resolve_ledger_path(path, options.get("definition"))):
            return object.__new__(postgres_ledger_class())
        return object.__new__(cls)

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
    ) -> None:
        from .._redaction import Redactor

        self.path = resolve_ledger_path(path, definition)
        #: no path, definition or $HOOKRAILS_LEDGER chose the file: the first Guard's does
        self._unbound = path is None and definition is None and not os.environ.get(ENV_VAR)
        #: the definition an explicit path overrides on purpose (no conflict with its key)
        self._override_for = definition if path is not None else None
        self.durable = durable
        self.busy_timeout = busy_timeout
        # built now, so a bad pattern fails here and not in the middle of a tool call
        self._rows = EventRows(Redactor(tuple(redact_patterns)), max_output, max_arguments)
        self._lock = WriterLock()
        self._conn: sqlite3.Connection | None = None
        #: (session, call id) -> rowid of the calls this writer started and not finished
        self._rowids: dict[tuple[str, str], int] = {}
        #: a file deleted or replaced under this writer is noticed after the next commit
        self._watch = Watch(self.path)
        self._checkpoints = Checkpointer(self.path, None)
        self._journal_poll = JournalPoll(self.path)
        self._degraded: str | None = None
        self._kind: str | None = None
        self._reopen_at = 0.0
        self._reader: LedgerReader | None = None
        self._behind: Behind | None = None  # write-behind (serve): write_behind()
        if not self._unbound:
            self._open()

    def __repr__(self) -> str:
        return f"Ledger({self.path!r})"

    max_output = _caps("max_output")  # the caps: kept by the row maker
    max_arguments = _caps("max_arguments")

    @property
    def degraded(self) -> str | None:
        """Why records go to the spool instead of the file (``None``: all is well); it
        starts with the kind: read_only, full, corrupt, locked, newer_schema, error."""
        if self._unbound:
            self._bind(None)
        return self._degraded

    @degraded.setter
    def degraded(self, value: str | None) -> None:
        self._degraded = value

    # --- opening ---------------------------------------------------------------

    def adopt(self, definition: AgentDefinition) -> None:
        """Agree with ``definition`` on the file, as a Guard given this Ledger does.

        A Ledger given no path (nor ``definition``, nor ``$HOOKRAILS_LEDGER``) takes the
        file the definition's ``ledger:`` key names (else the default) and opens it, so
        ``hookrails ledger --config`` finds its records. One that names another file
        than the key raises :class:`~guardrails.DefinitionError` naming both, unless it
        was made for this definition (``Ledger(path, definition=definition)``: an
        override on purpose) or ``$HOOKRAILS_LEDGER`` is set (it outranks the key).
        """
        if self._unbound:
            self._bind(definition)
        elif self._override_for is not definition:
            check_definition_ledger(self.path, definition)

    def _bind(self, definition: AgentDefinition | None) -> None:
        with self._lock:
            if self._unbound:
                self.path = resolve_ledger_path(None, definition)
                if is_url(self.path):  # the definition's ledger: is a PostgreSQL URL
                    self._become_postgres()
                    return
                self._watch = Watch(self.path)
                self._open()

    def _become_postgres(self) -> None:
        """A ``Ledger()`` whose definition names a PostgreSQL ledger becomes one, keeping
        its redaction and caps (the Guard already holds this object)."""
        cls = postgres_ledger_class()
        rows = self._rows
        self.__class__ = cls
        cls.__init__(self, self.path, max_output=rows.max_output, max_arguments=rows.max_arguments)
        self._rows = rows

    def _open(self) -> None:
        self._unbound = False  # whatever opens it, the file is chosen now
        folder = os.path.dirname(self.path)
        try:
            os.makedirs(folder, exist_ok=True)
            conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                timeout=self.busy_timeout,
                check_same_thread=False,
            )
        except (OSError, sqlite3.Error) as exc:
            self._degrade(exc, open_failure_kind(exc, folder))
            return
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            latest = migrations.latest_version()
            if version > latest:  # never written: its records wait for a newer hookrails
                conn.close()
                self._degrade(
                    LedgerError(
                        f"this ledger has schema version {version}, newer than this hookrails "
                        f"knows ({latest}); upgrade hookrails to write to it",
                        kind="newer_schema",
                    )
                )
                return
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {'FULL' if self.durable else 'NORMAL'}")
            if version < latest:
                migrations.apply_migrations(conn)
            # from here a writer waits in sqlite_write.begin (short sleeps), not in
            # SQLite's busy handler (sleeps growing to 100 ms)
            conn.execute("PRAGMA busy_timeout = 0")
        except sqlite3.Error as exc:
            conn.close()
            self._degrade(exc, open_failure_kind(exc, folder))
            return
        self._watch.opened()
        self._journal_poll = JournalPoll(self.path)
        self._conn = conn
        self._checkpoints.close()
        self._checkpoints = Checkpointer(self.path, conn)
        _catch_up(conn, self.path, self.busy_timeout, opened=True)

    def _close_connection(self) -> None:
        if self._conn is not None:
            try:  # noqa: SIM105  # contextlib.suppress: contextlib costs a hook 0.5 ms
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None

    def close(self, *, checkpoint: bool = True) -> None:
        """Close the file. ``checkpoint=False`` (a process about to end, ``hookrails
        hook``) keeps the connection open until the process exits, so SQLite neither
        checkpoints nor deletes the WAL: the records are in the WAL already (committed,
        so they survive the process; ``durable=True``: synced), and the next writer or
        SQLite's auto-checkpoint moves them into the file. Either way ``PRAGMA
        optimize`` runs first (bounded by ``analysis_limit``), so the query planner
        has statistics for the views' indexes."""
        if self._behind is not None:
            self._behind.close()
            self._behind.import_now()  # what the thread had not imported yet
        if self._reader is not None:  # first: the last connection to close checkpoints the
            self._reader.close()  # WAL into the file, and a reader's cannot
            self._reader = None
        with self._lock:
            if self._conn is not None and self._watch.pending:
                moved = self._watch.moved()  # the last records were not looked after yet
                if moved is not None:
                    self._follow(moved, committed=True)
            if self._conn is not None:
                try:  # contextlib.suppress: contextlib costs a hook 0.5 ms
                    self._conn.execute("PRAGMA analysis_limit = 400")
                    self._conn.execute("PRAGMA optimize")
                    from .rollup import at_close  # the views' rollups, a bounded step

                    at_close(self._conn)
                except sqlite3.Error:
                    pass
            self._checkpoints.close(wait=2.0)  # so the writer closes last: it folds the WAL in
            if not checkpoint and self._conn is not None:
                _KEPT_OPEN.append(self._conn)  # closed (and checkpointed) by nobody: os._exit
                self._conn = None
            self._close_connection()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def redactor(self) -> Redactor:
        """The redactor writes go through (built-in kinds plus ``redact_patterns``)."""
        return self._rows.redactor

    @property
    def reader(self) -> LedgerReader:
        """Read-only access for hooks (``ctx.ledger``)."""
        if self._unbound:
            self._bind(None)
        if self._reader is None:
            from .journal_import import ImportingReader

            self._reader = ImportingReader(self.path, self.import_journal)
        return self._reader

    # --- degraded mode ------------------------------------------------------------

    @property
    def spool_path(self) -> str:
        """Where records go while the file cannot be written: beside it, or in the
        temp folder when its folder cannot be written (or does not exist)."""
        from .spool import spool_path

        return spool_path(self.path)

    def _degrade(self, exc: BaseException, kind: str | None = None) -> None:
        """Spool from here on, saying why once (a newer schema once per process)."""
        kind = kind or self._error_kind(exc)
        text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        reason = f"{kind}: {text}"
        self._kind = kind
        self._reopen_at = time.monotonic() + _REOPEN_INTERVAL
        if kind == "newer_schema":
            if self.path not in _REPORTED_NEWER:  # once per process, not once per event
                _REPORTED_NEWER.add(self.path)
                logger().warning(
                    "hookrails ledger %s cannot be written (%s); guarding continues and "
                    "records go to %s for `hookrails ledger recover` of a newer hookrails",
                    safe_url(self.path),
                    reason,
                    self.spool_path,
                )
        elif self._degraded != reason:
            logger().warning(
                "hookrails ledger %s cannot be written (%s); guarding continues and records "
                "go to %s until `hookrails ledger recover`",
                safe_url(self.path),
                reason,
                self.spool_path,
            )
        self._degraded = reason

    @staticmethod
    def _error_kind(exc: BaseException) -> str:  # a driver error's kind, per engine
        return error_kind(exc)

    # --- writing ---------------------------------------------------------------------

    def _write(self, ops: list[Op], settle: Settle | None = None) -> bool:
        """Commit ``ops`` (and settle the session's state, see :mod:`.sqlite_state`), or
        spool them; whether they were committed into the file at ``self.path``. Events
        that queue up behind another writer commit together (:mod:`.sqlite_group`)."""
        return bool(self._lock.write((ops, settle), self._write_one, self._write_many))

    def _write_many(self, items: list[tuple[list[Op], Settle | None]]) -> list[bool]:
        """Several events in one transaction, in order (else one transaction apiece)."""
        conn = self._conn
        if len(items) == 1 or conn is None or self._degraded is not None:
            return [self._write_one(item) for item in items]
        if self._journal_poll():
            conn = self._import_first()
            if conn is None:
                return [self._write_one(item) for item in items]
        try:
            done = _commit_many(conn, items, self._rowids, self.busy_timeout)
        except Exception as exc:  # each on its own: it commits, escapes what SQLite refuses,
            if not is_busy(exc):  # or spools; but past busy_timeout none would get the lock
                return [self._write_one(item) for item in items]  # sooner: k more waits
            self._degrade(exc)
            from .spool import append

            for ops, settle in items:
                append(self.path, ops if settle is None else settle.ops, self.durable)
            return [False] * len(items)
        self._checkpoints.committed()
        moved = None
        for ops in done:
            moved = self._watch.committed(ops) or moved
        if moved is not None:  # committed into a file no longer at self.path
            self._follow(moved, committed=True)
            return [False] * len(items)
        return [True] * len(items)

    def _write_one(self, item: tuple[list[Op], Settle | None]) -> bool:
        ops, settle = item
        conn = self._conn
        if conn is None and time.monotonic() >= self._reopen_at:
            self._open()  # it could not be opened: try again, at most once a second
            conn = self._conn
        if conn is not None and self._journal_poll():  # journaled events first (a ms apart)
            conn = self._import_first()
        if conn is None:
            from .spool import append

            append(self.path, ops, self.durable)
            return False
        try:
            ops = _commit(conn, ops, settle, rowids=self._rowids, timeout=self.busy_timeout)
        except Exception as exc:  # sqlite errors, and values SQLite refuses to bind
            if settle is not None:
                ops = settle.ops  # the rows of the decision as it stands now
            moved = self._watch.moved()
            if moved is not None:  # it failed because the file went away
                self._watch.pending.append(ops)
                self._follow(moved, committed=False)
                return False
            self._degrade(exc)
            from .spool import append

            append(self.path, ops, self.durable)
            return False
        self._checkpoints.committed()
        moved = self._watch.committed(ops)
        if moved is not None:  # committed into a file no longer at self.path
            self._follow(moved, committed=True)
            return False
        if self._degraded is not None:  # writable again; the spool waits for recover()
            logger().info("hookrails ledger %s is writable again", self.path)
            self._degraded = self._kind = None
        return True

    def write_behind(self, delay: float = 0.005, max_age: float = 0.05) -> None:
        """Journal the events that need no session state, imported on a thread once none
        came for ``delay`` seconds or ``max_age`` after a batch's first (:mod:`.sqlite_behind`:
        ``hookrails serve``). Reads through this Ledger import first; ``close``, the rest."""
        from .sqlite_behind import Behind

        if self._behind is None:
            self._behind = Behind(self, delay, max_age)

    def journal_appended(self) -> None:
        """This process journaled an event: the next write imports first (its order kept)."""
        self._journal_poll.due = 0.0

    def import_journal(self) -> None:
        """Import what ``hookrails hook`` processes journaled: a reader's first step."""
        with self._lock:
            if self._unbound:
                self._open()
            if self._conn is not None and _journal_waiting(self.path):
                self._import_first()

    def _import_first(self) -> sqlite3.Connection | None:
        """The journal imported before this writer's statements (its lock held); the
        connection to go on with (write-behind's import follows a file that moved)."""
        if self._behind is not None:
            self._behind.import_locked()
        elif self._conn is not None:
            _catch_up(self._conn, self.path, self.busy_timeout)
        return self._conn

    # --- the file deleted or replaced under this writer -------------------------------

    def _follow(self, moved: str, *, committed: bool) -> None:
        """Reopen the file at ``self.path`` after ``moved`` (:class:`.sqlite_watch.Watch`)
        and write into it the records committed since the last look (``pending``; the
        last one refused by the old file when not ``committed``) that it does not hold,
        or spool them.

        The old WAL is checkpointed into the old file first (its frames live on in this
        connection's handles) and emptied: a deleted WAL's commits so reach the file,
        and a file renamed over this one never adopts the old file's frames (SQLite
        neither checkpoints nor deletes the WAL of a moved file when it closes it). When
        that cannot finish (another process reads the old file), the old WAL and
        shared memory are set aside as ``<name>.orphaned-<time>``. A "replaced" file
        that holds every record is the same file under another inode number (some
        network filesystems): nothing is written twice, and after a few such alarms
        the watch is switched off."""
        conn = self._conn
        assert conn is not None
        pending = self._watch.pending
        self._watch.pending = []
        self._rowids.clear()  # rowids of the old file
        if self._reader is not None:
            self._reader.close()  # it reads the old file; it reconnects when next asked
        try:
            busy, log, done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            emptied = busy == 0 and log == done
        except sqlite3.Error:
            emptied = False
        self._checkpoints.close(wait=2.0)  # its connection to the old file: closed first
        self._close_connection()
        if moved == "wal_deleted" and emptied:  # every commit reached the file
            pending = pending if not committed else []
        elif not emptied and moved != "wal_deleted":
            self._watch.set_aside()
        self._open()
        conn = self._conn
        if conn is not None:
            checked = bool(pending)
            pending = [ops for ops in pending if not already_there(conn, ops)]
            if moved == "replaced" and committed and checked and not pending:
                if self._watch.false_alarm():
                    logger().warning(
                        "hookrails ledger %s: its inode number changes while it stays the same "
                        "file; a file deleted or replaced under this writer will not be noticed",
                        self.path,
                    )
                return
        logger().warning(
            "hookrails ledger %s: %s while open; reopening it",
            self.path,
            "its WAL was deleted" if moved == "wal_deleted" else f"the file was {moved}",
        )
        self._rows.forget_sessions()  # a new file has none of their rows
        from .spool import append

        for ops in pending:
            if conn is not None:
                try:
                    _commit(conn, ops)
                    continue
                except Exception as exc:
                    self._degrade(exc)
                    conn = None
            append(self.path, ops, self.durable)

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
        """Record one event, its hook runs and its decision, in one transaction.
        ``agent``: the definition's name; ``owner_pid``: the process that runs the
        call, so ``recover`` can tell a call that will never finish. ``change``: what
        the event does to its session's state, settled in the same transaction (it may
        deny a halted session's call or cut context first: ``decision`` is changed in
        place); the outcome, or ``None`` when nothing was settled (the file could not be
        written: the state then stays this process's)."""
        ops = self._rows.ops(decision, now, agent=agent, tenant=tenant, owner_pid=owner_pid)
        behind = self._behind
        if behind is not None and behind.journal(ops, change, decision.event.session_id, agent):
            return JOURNALED  # nothing settled: it needs no session state
        if change is None or not change.active:
            self._write(ops)
            return None
        if change.halt is not None:  # kept like a reason: redacted
            change.halt = self._rows.redactor.redact_text(change.halt)
        settle = Settle(self._rows, decision, change, now, agent, tenant, owner_pid, ops)
        if change.halt is not None:  # marked in its transaction: no gate is journaled past it
            from .journal_import import marking

            settle = marking(settle, self.path)
        return settle.settled if self._write(ops, settle) else None

    def session_state(self, session_id: str, agent: str) -> SessionState | None:
        """What ``session_id`` of ``agent`` (the definition's name) remembers across
        processes, as committed; ``None`` when it has nothing yet. Raises
        :class:`LedgerError` when the file cannot be read."""
        with self._lock:
            conn = self._conn
            if conn is None:
                raise LedgerError(
                    f"the ledger cannot be read ({self.degraded})", path=self.path, kind="degraded"
                )
            # journaled events change no session state: write-behind's wait for no import
            if self._behind is None and _journal_waiting(self.path):
                _catch_up(conn, self.path, self.busy_timeout)
            try:
                return read_state(conn, session_id, agent)
            except sqlite3.Error as exc:
                raise LedgerError(str(exc), path=self.path, kind=error_kind(exc)) from exc

    def write_transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction on the writer connection, for state kept in
        this file beside the records (idempotency keys). Raises :class:`LedgerError` when
        the file cannot be written; the caller decides whether that fails open or closed."""
        import contextlib  # here, not at import: contextlib costs a hook process 0.5 ms

        return contextlib.contextmanager(self._write_transaction)()

    def _write_transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._unbound:
                self._open()
            if self._conn is not None:
                moved = self._watch.moved()
                if moved is not None:
                    self._follow(moved, committed=True)
                if self._journal_poll():  # journaled calls first (mark_interrupted finds them)
                    self._import_first()
            conn = self._conn
            if conn is None:
                raise LedgerError(
                    f"the ledger cannot be written ({self._degraded})",
                    path=self.path,
                    kind="degraded",
                )
            try:
                _begin(conn, self.busy_timeout)
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                _rollback(conn)
                if isinstance(exc, sqlite3.Error):
                    raise LedgerError(str(exc), path=self.path, kind=error_kind(exc)) from exc
                raise

    def mark_interrupted(self, session_id: str, tool_call_id: str, reason: str, now: float) -> None:
        """A ``pending`` call that will not run becomes ``interrupted``, with why."""
        with self.write_transaction() as conn:
            conn.execute(
                "UPDATE tool_calls SET status = 'interrupted', finished_at = ?, "
                "error_message = ? WHERE session_id = ? AND tool_call_id = ? "
                "AND status = 'pending'",
                (iso_time(now), self.redactor.redact_text(reason), session_id, tool_call_id),
            )

    # --- idempotency keys (see guardrails.ledger.store) -----------------------------

    def _keys(self, op: str, *args: Any) -> Any:
        """``sqlite_keys.<op>(conn, *args)`` in a write transaction (loaded when used)."""
        from . import sqlite_keys

        try:
            with self.write_transaction() as conn:
                return getattr(sqlite_keys, op)(conn, *args)
        except sqlite3.Error as exc:
            raise LedgerError(str(exc), path=self.path, kind=error_kind(exc)) from exc

    def claim_key(self, claim: KeyClaim) -> ClaimResult:
        result: ClaimResult = self._keys("claim", claim, self.path)
        return result

    def complete_key(
        self, key: str, tool_call_id: str | None, result: str, now: float, *, exact: bool
    ) -> None:
        self._keys("finish", key, tool_call_id, "completed", result, now, exact)

    def fail_key(
        self, key: str, tool_call_id: str | None, error: str, now: float, *, exact: bool
    ) -> None:
        self._keys("finish", key, tool_call_id, "failed", error, now, exact)

    def release_key(self, key: str, tool_call_id: str | None) -> bool:
        return bool(self._keys("release", key, tool_call_id))

    def prune_keys(self, now: float, limit: int) -> int:
        return int(self._keys("prune", now, limit))

    # --- recovery --------------------------------------------------------------------

    def recover(
        self, *, older_than: float | None = None, now: float | None = None
    ) -> RecoverReport:
        """Import spooled records, then mark stale ``pending`` calls ``interrupted``.

        A pending call is stale when the process that wrote it (``pid``, this
        machine) is gone, or, with ``older_than`` seconds, when it started before that.

        The file is reopened first when this Ledger was degraded, so fixing the
        cause (permissions, space, a lock) and calling ``recover()`` is enough. A
        file that still cannot be written raises :class:`LedgerError` with the kind
        (``corrupt``: SQLite cannot read it, so nothing can be imported into it;
        move it aside and recover again to import the spool into a fresh file;
        ``newer_schema``: a newer hookrails recovers it). Spooled records that cannot
        be imported go, with why, to ``<spool>.rejected``; the others are imported.
        """
        from .sqlite_recover import recover_ledger

        return recover_ledger(self, older_than, now)


if TYPE_CHECKING:

    def _implements_the_store(ledger: Ledger) -> tuple[Store, StoreReader]:
        """For mypy: Ledger and LedgerReader implement the store interface."""
        return ledger, ledger.reader
