"""The SQLite tool ledger: every call, decision and hook run, queryable with SQL.

Writes take the hot path: stdlib ``sqlite3``, WAL, ``busy_timeout``,
``synchronous=NORMAL`` (``durable=True``: FULL), prepared statements and one
``BEGIN IMMEDIATE`` transaction per event. sqlite-utils is loaded only to
apply migrations and for the read side (CLI, queries). When the file cannot
be written (read-only, disk full, corrupt, locked past the timeout) the Guard
keeps guarding and the records go to a JSONL spool beside the database;
``recover()`` imports them later.

A hook process opens a Ledger for every event, so this module imports no more
than it needs to record one: ``logging``, ``pathlib``, ``contextlib``,
``threading``, ``dataclasses`` and ``typing`` load only where they are used.
"""

from __future__ import annotations

import errno
import json
import os
import re
import sqlite3
import sys
import time
from _thread import allocate_lock as _new_lock  # threading.Lock, without threading

from .._canonical_json import input_hash
from .._dataclass_free import LIST, record
from ..errors import LedgerError
from ..results import UNSET

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    import logging
    from collections.abc import Iterable, Iterator, Sequence
    from contextlib import AbstractContextManager
    from dataclasses import Field
    from pathlib import Path
    from typing import Any, ClassVar

    from .._redaction import Redactor
    from ..definition.model import AgentDefinition
    from ..dispatch.guard import Session
    from ..results import Decision

__all__ = [
    "DEFAULT_LEDGER",
    "Ledger",
    "LedgerReader",
    "RecoverReport",
    "connect_readonly",
    "migrations",
    "resolve_ledger_path",
    "schema_sql",
    "spool_paths",
]


def _log() -> logging.Logger:
    """The ``guardrails.ledger.sqlite`` logger (``ledger.log``), imported when first needed."""
    import logging

    return logging.getLogger("guardrails.ledger")


def __getattr__(name: str) -> Any:
    """``log`` (the module's logger) is made on first use: ``logging`` costs a hook ~4 ms."""
    if name == "log":
        value = globals()[name] = _log()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


DEFAULT_LEDGER = os.path.join(".hookrails", "ledger.db")
#: the ledger's SQL (migrations, views, saved queries): data inside this package
SQL_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sql")
ENV_VAR = "HOOKRAILS_LEDGER"
DEFAULT_MAX_OUTPUT = 64 * 1024
_MIGRATIONS_TABLE = "_hookrails_migrations"


def resolve_ledger_path(
    path: str | os.PathLike[str] | None = None, definition: AgentDefinition | None = None
) -> str:
    """Explicit path, else ``$HOOKRAILS_LEDGER``, else the definition's ``ledger:``
    (relative to its file), else ``.hookrails/ledger.db`` under the working directory."""
    if path is not None:
        return os.path.abspath(os.fspath(path))
    env = os.environ.get(ENV_VAR)
    if env:
        return os.path.abspath(env)
    if definition is not None and definition.ledger:
        base = os.path.dirname(os.path.abspath(definition.source)) if definition.source else ""
        return os.path.abspath(os.path.join(base, definition.ledger))
    return os.path.abspath(DEFAULT_LEDGER)


# --- migrations ------------------------------------------------------------------


@record(frozen=True)
class Migration:
    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    number: int
    name: str
    sql: str

    def __init__(self, number: int, name: str, sql: str) -> None:
        object.__setattr__(self, "number", number)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "sql", sql)


_MIGRATION_NAME = re.compile(r"(\d{4})_(\w+)\.sql")


def _migration_folder() -> str:
    return os.path.join(SQL_DIR, "migrations")


def _migration_files() -> list[tuple[re.Match[str], Path]]:
    """``(name match, path)`` of each migration file, in order; nothing is read."""
    from pathlib import Path

    folder = Path(_migration_folder())
    return [
        (m, folder / entry)
        for entry in sorted(os.listdir(folder))
        if (m := _MIGRATION_NAME.fullmatch(entry))
    ]


def migrations() -> list[Migration]:
    """Forward-only migrations from ``ledger/migrations/NNNN_name.sql``, in order."""
    found = [
        Migration(int(m.group(1)), m.group(2), path.read_text(encoding="utf-8"))
        for m, path in _migration_files()
    ]
    numbers = [m.number for m in found]
    if numbers != list(range(1, len(found) + 1)):
        raise LedgerError(f"migrations are not numbered 0001.. without gaps: {numbers}")
    return found


def _views() -> list[tuple[str, str]]:
    from pathlib import Path

    folder = Path(SQL_DIR, "views")
    if not folder.is_dir():
        return []
    return [
        (entry[:-4], (folder / entry).read_text(encoding="utf-8"))
        for entry in sorted(os.listdir(folder))
        if entry.endswith(".sql")
    ]


def _statements(script: str) -> Iterator[str]:
    """Split a script into complete statements (``executescript`` would COMMIT for us)."""
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            stmt = buf.strip()
            buf = ""
            if stmt and not all(
                ln.strip().startswith("--") or not ln.strip() for ln in stmt.splitlines()
            ):
                yield stmt
    if buf.strip() and not all(
        ln.strip().startswith("--") or not ln.strip() for ln in buf.splitlines()
    ):
        raise LedgerError(f"incomplete SQL statement: {buf.strip()[:60]!r}")


def _apply_migrations(conn: sqlite3.Connection) -> None:
    """Bring the file to the latest schema: each migration in its own transaction."""
    import sqlite_utils

    db = sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)
    pending = migrations()
    for migration in pending:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version >= migration.number:
                conn.execute("ROLLBACK")
                continue
            if not db[_MIGRATIONS_TABLE].exists():
                conn.execute(
                    f"CREATE TABLE {_MIGRATIONS_TABLE} "
                    "(number INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
                )
            for stmt in _statements(migration.sql):
                conn.execute(stmt)
            conn.execute(
                f"INSERT INTO {_MIGRATIONS_TABLE} (number, name, applied_at) VALUES (?, ?, ?)",
                (migration.number, migration.name, _iso(time.time())),
            )
            _create_views(conn)
            conn.execute(f"PRAGMA user_version = {migration.number}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLITE_FULL and friends may have rolled back already
                conn.execute("ROLLBACK")
            raise


def _create_views(conn: sqlite3.Connection) -> None:
    """(Re)create every view. Views are part of the schema: a release that changes a
    view ships a migration too, so files on disk pick the change up on their next open
    (opening an up-to-date file never reads these files)."""
    for name, sql in _views():
        conn.execute(f"DROP VIEW IF EXISTS {name}")
        for stmt in _statements(sql):
            conn.execute(stmt)


def schema_sql() -> str:
    """The schema the migrations produce, as checked in at ``ledger/schema.sql``."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        _apply_migrations(conn)
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
            "AND name NOT LIKE 'sqlite_%' ORDER BY CASE type WHEN 'table' THEN 0 "
            "WHEN 'index' THEN 1 ELSE 2 END, name"
        ).fetchall()
    finally:
        conn.close()
    head = (
        "-- Generated from ledger/migrations and ledger/views by `make schemas`; do not edit.\n"
        f"-- Schema version {len(migrations())}.\n\n"
    )
    return head + "".join(f"{sql};\n\n" for _, _, sql in rows).rstrip() + "\n"


# --- timestamps and encoding ---------------------------------------------------------


def _iso(t: float) -> str:
    ms = int(t * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def _error_parts(error: str) -> tuple[str | None, str]:
    m = re.match(
        r"([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Timeout\w*)): (.*)", error, re.S
    )
    if m:
        return m.group(1), m.group(2)
    return None, error


# --- statements (named, so the spool can store a name and parameters) -------------

_SQL: dict[str, str] = {
    "session": (
        "INSERT INTO sessions (session_id, agent_name, tenant, cwd, started_at, last_seen_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
        "last_seen_at = excluded.last_seen_at"
    ),
    "session_end": ("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE session_id = ?"),
    "pre": (
        "INSERT INTO tool_calls (session_id, agent_name, agent_id, agent_type, tool_call_id, "
        "tool_name, tool_call_arguments, final_arguments, arguments_hash, decision, reason, "
        "status, started_at, finished_at, duration_ms, pid, annotations) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        # a PreToolUse met again (replayed from the spool after its PostToolUse reached
        # the file, or sent twice) fills in what it knows but never reopens a finished call
        "ON CONFLICT (session_id, tool_call_id) DO UPDATE SET "
        "tool_call_arguments = excluded.tool_call_arguments, "
        "arguments_hash = excluded.arguments_hash, "
        "final_arguments = excluded.final_arguments, decision = excluded.decision, "
        "reason = excluded.reason, pid = excluded.pid, "
        "annotations = coalesce(excluded.annotations, tool_calls.annotations), "
        "started_at = min(tool_calls.started_at, excluded.started_at), "
        "status = CASE tool_calls.status WHEN 'pending' THEN excluded.status "
        "ELSE tool_calls.status END, "
        "finished_at = CASE tool_calls.status WHEN 'pending' THEN excluded.finished_at "
        "ELSE tool_calls.finished_at END, "
        "duration_ms = CASE tool_calls.status WHEN 'pending' THEN excluded.duration_ms "
        "ELSE tool_calls.duration_ms END"
    ),
    "post": (
        "INSERT INTO tool_calls (session_id, agent_name, agent_id, agent_type, tool_call_id, "
        "tool_name, tool_call_arguments, final_arguments, arguments_hash, decision, status, "
        "tool_call_result, result_truncated, result_bytes, error_type, error_message, "
        "started_at, finished_at, duration_ms) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'allow', ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (session_id, tool_call_id) DO UPDATE SET "
        "final_arguments = excluded.final_arguments, status = excluded.status, "
        "tool_call_result = excluded.tool_call_result, "
        "result_truncated = excluded.result_truncated, result_bytes = excluded.result_bytes, "
        "error_type = excluded.error_type, error_message = excluded.error_message, "
        "finished_at = excluded.finished_at, duration_ms = COALESCE(excluded.duration_ms, "
        "(julianday(excluded.finished_at) - julianday(tool_calls.started_at)) * 86400000.0)"
    ),
    "event": (
        "INSERT INTO events (session_id, event, agent_id, agent_type, payload, decision, "
        "reason, injected_chars, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    "hook_run": (
        "INSERT INTO hook_runs (session_id, event, tool_call_id, event_id, hook, matcher, "
        "priority, outcome, duration_ms, error, injected_chars, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
}
#: placeholder in hook_run params for the id of the events row written just before
#: (a string, so a spooled record keeps its meaning)
_EVENT_ID = "@event_id"
_SESSION_REFRESH = 30.0  # seconds between refreshes of sessions.last_seen_at
_SESSION_EVENTS = frozenset({"SessionStart", "SessionEnd", "UserPromptSubmit"})
_CACHE_LIMIT = 10_000
#: characters beyond the cap that are still redacted, so a secret cut by the cap is caught
_CUT_MARGIN = 4096
#: seconds between attempts to reopen a file that could not be opened
_REOPEN_INTERVAL = 1.0


def spool_paths(path: str) -> list[str]:
    """Where a :class:`Ledger` for ``path`` (absolute) may have spooled records: beside
    the file, or in the temp folder when the file's folder could not be written."""
    return [path + ".spool.jsonl", _temp_spool(path)]


def _temp_spool(path: str) -> str:
    import hashlib
    import tempfile

    tag = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return os.path.join(tempfile.gettempdir(), f"hookrails-spool-{tag}.jsonl")


def _latest_version() -> int:
    """The newest schema version, from the migration file names alone (no reading, and
    no ``pathlib``: every hook process asks)."""
    return sum(1 for entry in os.listdir(_migration_folder()) if _MIGRATION_NAME.fullmatch(entry))


class Ledger:
    """A ledger file. ``Guard(definition, ledger=Ledger("ledger.db"))`` records into it.

    ``path``: see :func:`resolve_ledger_path`. ``durable``: ``synchronous=FULL``.
    ``busy_timeout``: seconds a write waits for another writer before it spools.
    ``max_output``: UTF-8 bytes of a tool result (or event payload) kept as JSON; a
    longer one is cut, ``result_truncated`` says so and ``result_bytes`` keeps the
    size before the cut. ``redact_patterns``: extra regexes to mask (see
    :class:`~guardrails._redaction.Redactor`); tool inputs, outputs, payloads, reasons
    and error messages are redacted before anything is written, spool included.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        definition: AgentDefinition | None = None,
        durable: bool = False,
        busy_timeout: float = 5.0,
        max_output: int = DEFAULT_MAX_OUTPUT,
        redact_patterns: Iterable[str] = (),
    ) -> None:
        from .._redaction import Redactor

        self.path = resolve_ledger_path(path, definition)
        self.durable = durable
        self.busy_timeout = busy_timeout
        self.max_output = max_output
        # built now, so a bad pattern fails here and not in the middle of a tool call
        self._redactor: Redactor = Redactor(tuple(redact_patterns))
        self._lock = _new_lock()
        self._conn: sqlite3.Connection | None = None
        #: why records go to the spool instead of the file (None: all is well);
        #: it starts with the kind: read_only, full, corrupt, locked, newer_schema, error
        self.degraded: str | None = None
        self._kind: str | None = None
        self._reopen_at = 0.0
        #: session id -> when its row was last written (the upsert is paid once a while)
        self._sessions_seen: dict[str, float] = {}
        #: (session, tool call) -> (final arguments JSON, hash) from PreToolUse, for the post
        self._pending_args: dict[tuple[str, str | None], tuple[str, str]] = {}
        self._names: dict[str, str] = {}
        self._reader: LedgerReader | None = None
        self._open()

    def __repr__(self) -> str:
        return f"Ledger({self.path!r})"

    # --- opening ---------------------------------------------------------------

    def _open(self) -> None:
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
            self._degrade(exc, _open_failure(exc, folder))
            return
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            latest = _latest_version()
            if version > latest:
                conn.close()
                raise LedgerError(
                    f"this ledger has schema version {version}, newer than this hookrails "
                    f"knows ({latest}); upgrade hookrails to write to it",
                    path=self.path,
                    kind="newer_schema",
                )
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {'FULL' if self.durable else 'NORMAL'}")
            if version < latest:
                _apply_migrations(conn)
        except sqlite3.Error as exc:
            conn.close()
            self._degrade(exc, _open_failure(exc, folder))
            return
        self._conn = conn

    def _close_connection(self) -> None:
        if self._conn is not None:
            try:  # noqa: SIM105  # contextlib.suppress: contextlib costs a hook 0.5 ms
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None

    def close(self) -> None:
        with self._lock:
            self._close_connection()
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def redactor(self) -> Redactor:
        """The redactor writes go through (built-in kinds plus ``redact_patterns``)."""
        return self._redactor

    @property
    def reader(self) -> LedgerReader:
        """Read-only access for hooks (``ctx.ledger``)."""
        if self._reader is None:
            self._reader = LedgerReader(self.path)
        return self._reader

    # --- degraded mode ------------------------------------------------------------

    @property
    def spool_path(self) -> str:
        """Where records go while the file cannot be written: beside it, or in the
        temp folder when its folder cannot be written (or does not exist)."""
        beside = self.path + ".spool.jsonl"
        folder = os.path.dirname(self.path)
        if (
            os.path.isdir(folder)
            and os.access(folder, os.W_OK | os.X_OK)
            and (not os.path.exists(beside) or os.access(beside, os.W_OK))
        ):
            return beside
        return _temp_spool(self.path)

    def _degrade(self, exc: BaseException, kind: str | None = None) -> None:
        kind = kind or _classify(exc)
        reason = f"{kind}: {exc}"
        self._kind = kind
        self._reopen_at = time.monotonic() + _REOPEN_INTERVAL
        if self.degraded != reason:
            _log().warning(
                "hookrails ledger %s cannot be written (%s); guarding continues and records "
                "go to %s until `hookrails ledger recover`",
                self.path,
                reason,
                self.spool_path,
            )
        self.degraded = reason

    def _spool(self, ops: list[tuple[str, list[Any]]]) -> None:
        line = json.dumps({"v": 1, "ops": [[n, p] for n, p in ops]}, default=str) + "\n"
        data = line.encode("utf-8", "surrogateescape")
        first = self.spool_path
        error: OSError | str = "no spool location"
        for target in dict.fromkeys((first, _temp_spool(self.path))):
            try:  # one O_APPEND write per record: processes spooling at once do not interleave
                fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    written = os.write(fd, data)
                finally:
                    os.close(fd)
            except OSError as exc:
                error = exc
                continue
            if written == len(data):
                return
            error = f"short write ({written} of {len(data)} bytes)"
        # nowhere left to write: say so loudly, keep guarding
        _log().error("hookrails ledger spool %s failed: %s; record lost", first, error)

    # --- writing ---------------------------------------------------------------------

    def _write(self, ops: list[tuple[str, list[Any]]]) -> None:
        with self._lock:
            conn = self._conn
            if conn is None and time.monotonic() >= self._reopen_at:
                try:  # it could not be opened: try again, at most once a second
                    self._open()
                except LedgerError as exc:  # newer_schema: someone upgraded it meanwhile
                    self._degrade(exc)
                conn = self._conn
            if conn is None:
                self._spool(ops)
                return
            try:
                conn.execute("BEGIN IMMEDIATE")
                _execute(conn, ops)
                conn.execute("COMMIT")
            except Exception as exc:  # sqlite errors, and values SQLite refuses to bind
                if conn.in_transaction:
                    import contextlib

                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                self._degrade(exc)
                self._spool(ops)
                return
            if self.degraded is not None:  # writable again; the spool waits for recover()
                _log().info("hookrails ledger %s is writable again", self.path)
                self.degraded = self._kind = None

    def _text_of(self, value: Any) -> str:
        """What JSON cannot hold (bytes, objects) is stored as its redacted ``str``."""
        return self._redactor.redact_text(str(value))

    def _json(self, value: Any, cap: int | None = None) -> tuple[str, bool, int]:
        if cap is not None:
            big = self._oversized(value, cap)
            if big is not None:
                return big
        try:  # allow_nan=False: the column must stay valid JSON for json_extract()
            text = json.dumps(
                self._redactor.redact(value),
                ensure_ascii=False,
                allow_nan=False,
                default=self._text_of,
            )
        except (TypeError, ValueError, RecursionError):  # NaN, keys JSON refuses, deep nesting
            text = json.dumps(self._redactor.redact_text(repr(value)), ensure_ascii=False)
        if cap is None:
            return text, False, len(text)
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        if size <= cap:
            return text, False, size
        cut = text.encode("utf-8", "surrogatepass")[:cap].decode("utf-8", "ignore")
        return json.dumps(cut + "…[truncated]", ensure_ascii=False), True, size

    def _oversized(self, value: Any, cap: int) -> tuple[str, bool, int] | None:
        """A value far over the cap is cut first and redacted as text, so a 1 MB tool
        output costs a cap's worth of redaction, not a megabyte's."""
        if isinstance(value, str) and len(value) <= cap:
            return None
        try:
            raw = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError):
            return None
        if len(raw) <= cap + _CUT_MARGIN:
            return None
        size = len(raw.encode("utf-8", "surrogatepass"))
        head = self._redactor.redact_text(raw[: cap + _CUT_MARGIN])
        cut = head.encode("utf-8", "surrogatepass")[:cap].decode("utf-8", "ignore")
        return json.dumps(cut + "…[truncated]", ensure_ascii=False), True, size

    def _name(self, hook: str) -> str:
        """A hook's name, redacted once (an http hook's URL may carry a token)."""
        name = self._names.get(hook)
        if name is None:
            name = self._names[hook] = self._redactor.redact_text(hook)
        return name

    def _text(self, value: str | None) -> str | None:
        return self._redactor.redact_text(value) if value else value

    def record(
        self, decision: Decision, session: Session, now: float, *, owner_pid: int | None = None
    ) -> None:
        """Record one event, its hook runs and its decision, in one transaction."""
        ev = decision.event
        name = ev.event_name
        at = _iso(now)
        sid = ev.session_id
        agent = session.guard.definition.name
        reason = self._text(decision.reason)
        ops: list[tuple[str, list[Any]]] = []
        seen = self._sessions_seen.get(sid)
        if seen is None or now - seen >= _SESSION_REFRESH or name in _SESSION_EVENTS:
            ops.append(("session", [sid, agent, session.tenant, ev.cwd, at, at]))
            if len(self._sessions_seen) >= _CACHE_LIMIT:
                self._sessions_seen.clear()
            self._sessions_seen[sid] = now
        call_id = None
        event_ref: Any = None
        if name == "PreToolUse":
            call_id = ev.tool_use_id
            args, _, _ = self._json(ev.tool_input)
            final = (
                args if decision.updated_input is None else self._json(decision.updated_input)[0]
            )
            denied = decision.decision == "deny"
            digest = input_hash(ev.tool_input)
            notes = None if decision.annotations is None else self._json(decision.annotations)[0]
            if not denied:
                if len(self._pending_args) >= _CACHE_LIMIT:
                    self._pending_args.clear()
                self._pending_args[(sid, call_id)] = (final, digest)
            ops.append(
                (
                    "pre",
                    [
                        sid, agent, ev.agent_id, ev.agent_type, call_id, ev.tool_name, args,
                        final, digest, decision.decision, reason,
                        "denied" if denied else "pending", at, at if denied else None,
                        0.0 if denied else None, owner_pid, notes,
                    ],
                )
            )  # fmt: skip
        elif name in ("PostToolUse", "PostToolUseFailure"):
            call_id = ev.tool_use_id
            cached = self._pending_args.pop((sid, call_id), None)
            if cached is not None and ev.tool_input is not None:
                args, digest = cached
            else:  # no PreToolUse here (another process recorded it, or none ran)
                args, _, _ = self._json(ev.tool_input)
                digest = input_hash(ev.tool_input)
            result: str | None
            size: int | None
            if name == "PostToolUse":
                output = decision.updated_output
                if output is UNSET:
                    output = ev.tool_response
                result, truncated, size = self._json(output, self.max_output)
                status, etype, emsg = "ok", None, None
            else:
                result, truncated, size = None, False, None
                status = "interrupted" if ev.is_interrupt else "error"
                etype, emsg = _error_parts(ev.error)
                emsg = self._text(emsg)
            ops.append(
                (
                    "post",
                    [
                        sid, agent, ev.agent_id, ev.agent_type, call_id, ev.tool_name, args, args,
                        digest, status, result, int(truncated), size, etype,
                        emsg, at, at, ev.duration_ms,
                    ],
                )
            )  # fmt: skip
        else:
            payload, _, _ = self._json(ev.to_claude(), self.max_output)
            verdict = "halt" if decision.halted else "block" if decision.blocked else "allow"
            injected = sum(len(i.text) for i in decision.injections)
            ops.append(
                (
                    "event",
                    [sid, name, ev.agent_id, ev.agent_type, payload, verdict, reason, injected,
                     at],
                )
            )  # fmt: skip
            event_ref = _EVENT_ID
            if name == "SessionEnd":
                ops.append(("session_end", [at, getattr(ev, "reason", None), sid]))
        for r in decision.runs:
            ops.append(
                (
                    "hook_run",
                    [sid, name, call_id, event_ref, self._name(r.hook), r.matcher, r.priority,
                     r.outcome,
                     r.duration_ms, self._text(r.error), r.injected_chars, at],
                )
            )  # fmt: skip
        self._write(ops)

    def write_transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction on the writer connection, for built-ins that
        keep state in the ledger (idempotency claims). Raises :class:`LedgerError` when the
        file cannot be written; the caller decides whether that fails open or closed."""
        import contextlib  # here, not at import: contextlib costs a hook process 0.5 ms

        return contextlib.contextmanager(self._write_transaction)()

    def _write_transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._conn
            if conn is None:
                raise LedgerError(
                    f"the ledger cannot be written ({self.degraded})",
                    path=self.path,
                    kind="degraded",
                )
            try:
                conn.execute("BEGIN IMMEDIATE")
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    import contextlib

                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise LedgerError(str(exc), path=self.path, kind=_classify(exc)) from exc
                raise

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
        move it aside and recover again to import the spool into a fresh file).
        Spooled records that are not valid go to ``<spool>.rejected``.
        """
        with self._lock:
            if self._conn is None or self.degraded is not None:
                self._close_connection()
                self._open()
            conn = self._conn
            if conn is None:
                raise self._cannot_recover()
            report = RecoverReport()
            try:
                for spool in dict.fromkeys(spool_paths(self.path)):
                    counts = self._import_spool(conn, spool)
                    if counts is not None:
                        report.imported += counts[0]
                        report.rejected += counts[1]
                        report.spools.append(spool)
                report.interrupted = self._mark_stale(conn, older_than, now)
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    import contextlib

                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise LedgerError(
                    f"recover failed: {exc}; the spool is kept, run recover again",
                    path=self.path,
                    kind=_classify(exc),
                ) from exc
            self.degraded = self._kind = None
        return report

    def _cannot_recover(self) -> LedgerError:
        kind = self._kind or "error"
        waiting = [s for s in spool_paths(self.path) if os.path.exists(s)]
        where = f"; the spooled records stay in {', '.join(waiting)}" if waiting else ""
        if kind == "corrupt":
            advice = (
                "SQLite cannot read it, so nothing can be imported into it: move it aside "
                "(keep it for inspection) and run recover again to import into a fresh ledger"
            )
        else:
            advice = "fix the cause and run recover again"
        return LedgerError(
            f"cannot recover into this ledger ({self.degraded}): {advice}{where}",
            path=self.path,
            kind=kind,
        )

    def _mark_stale(
        self, conn: sqlite3.Connection, older_than: float | None, now: float | None
    ) -> int:
        now = time.time() if now is None else now
        rows = conn.execute(
            "SELECT id, pid, started_at FROM tool_calls WHERE status = 'pending'"
        ).fetchall()
        cutoff = _iso(now - older_than) if older_than is not None else None
        stale = [
            row_id
            for row_id, pid, started in rows
            if (pid is not None and pid != os.getpid() and not _alive(pid))
            or (cutoff is not None and started < cutoff)
        ]
        if stale:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(
                "UPDATE tool_calls SET status = 'interrupted', finished_at = ?, "
                "error_message = COALESCE(error_message, 'interrupted: the call never finished "
                "(process ended or timed out)') WHERE id = ? AND status = 'pending'",
                [(_iso(now), row_id) for row_id in stale],
            )
            conn.execute("COMMIT")
        return len(stale)

    def _import_spool(self, conn: sqlite3.Connection, spool: str) -> tuple[int, int] | None:
        """Import one spool in one transaction: (records imported, records rejected).

        The spool is renamed to ``<spool>.importing`` under the write lock, so records
        spooled meanwhile start a new spool and two recovers never import it twice; a
        ``.importing`` file left by a recover that stopped before COMMIT is imported
        (it was not). Lines that are not records, or that the schema refuses, go to
        ``<spool>.rejected`` instead of blocking every later record.
        """
        work = spool + ".importing"
        if not os.path.exists(spool) and not os.path.exists(work):
            return None
        conn.execute("BEGIN IMMEDIATE")
        if os.path.exists(spool):
            if os.path.exists(work):
                with open(spool, "rb") as src, open(work, "ab") as dst:
                    dst.write(b"\n" + src.read())  # a torn last line stays on its own line
                os.remove(spool)
            else:
                os.replace(spool, work)
        with open(work, encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.readlines()
        imported, rejected = 0, []
        for line in lines:
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                ops = [(str(name), list(params)) for name, params in entry["ops"] if name in _SQL]
            except (ValueError, KeyError, TypeError):
                rejected.append(line)  # torn by a crash or a full disk mid-write
                continue
            conn.execute("SAVEPOINT spool_record")
            try:
                _execute(conn, ops)
            except (sqlite3.IntegrityError, sqlite3.ProgrammingError, sqlite3.InterfaceError):
                conn.execute("ROLLBACK TO spool_record")
                rejected.append(line)
            else:
                imported += 1
            conn.execute("RELEASE spool_record")
        conn.execute("COMMIT")
        if rejected:
            with open(spool + ".rejected", "a", encoding="utf-8", errors="surrogateescape") as fh:
                fh.writelines(ln if ln.endswith("\n") else ln + "\n" for ln in rejected)
            _log().warning(
                "hookrails ledger: %d spooled records in %s could not be imported; kept in %s",
                len(rejected),
                spool,
                spool + ".rejected",
            )
        os.remove(work)
        return imported, len(rejected)


def _execute(conn: sqlite3.Connection, ops: Sequence[tuple[str, list[Any]]]) -> None:
    """Run one event's statements; its hook runs go in one ``executemany``."""
    event_id: int | None = None
    runs: list[list[Any]] = []
    for name, params in ops:
        if name == "hook_run":
            if params[3] == _EVENT_ID:
                params = [*params[:3], event_id, *params[4:]]
            runs.append(params)
            continue
        cur = conn.execute(_SQL[name], params)
        if name == "event":
            event_id = cur.lastrowid
    if runs:
        conn.executemany(_SQL["hook_run"], runs)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine still runs (a zombie does not)."""
    if sys.platform == "win32":  # os.kill(pid, 0) would send CTRL_C_EVENT there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # Linux: a killed child nobody has reaped yet is still "there" for kill()
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] != b"Z"


def _open_failure(exc: BaseException, folder: str) -> str:
    kind = _classify(exc)
    if kind == "error" and not os.access(folder, os.W_OK):
        return "read_only"  # "unable to open database file": no file, -wal or -shm here
    return kind


def _classify(exc: BaseException) -> str:
    if isinstance(exc, LedgerError):
        return exc.kind
    if isinstance(exc, OSError) and exc.errno is not None:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return "full"
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EEXIST):
            return "read_only"  # the folder cannot be created or written
    text = str(exc).lower()
    if "readonly" in text or "read-only" in text or "permission denied" in text:
        return "read_only"
    if "full" in text:
        return "full"
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return "corrupt"
    if "locked" in text or "busy" in text:
        return "locked"
    return "error"


@record()
class RecoverReport:
    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    imported: int
    interrupted: int
    spools: list[str]
    #: spooled records that could not be imported (kept in ``<spool>.rejected``)
    rejected: int

    def __init__(
        self,
        imported: int = 0,
        interrupted: int = 0,
        spools: list[str] = LIST,
        rejected: int = 0,
    ) -> None:
        self.imported = imported
        self.interrupted = interrupted
        self.spools = [] if spools is LIST else spools
        self.rejected = rejected


# --- the read side ---------------------------------------------------------------------

_READ_ONLY_OPS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
}


def _authorizer(
    action: int, arg1: str | None, arg2: str | None, db: str | None, src: str | None
) -> int:
    if action in _READ_ONLY_OPS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and arg1 in ("table_info", "table_xinfo", "index_list"):
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def connect_readonly(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """A connection that can only read: opened ``mode=ro`` and with an authorizer
    that refuses writes, ATTACH and PRAGMAs, so a query cannot change anything."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise LedgerError("no ledger here yet", path=path, kind="missing")
    from urllib.parse import quote

    try:
        conn = sqlite3.connect(
            f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True, check_same_thread=False
        )
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise LedgerError(
            f"cannot read the ledger: {exc}", path=path, kind=_classify(exc)
        ) from None
    conn.set_authorizer(_authorizer)
    return conn


class LedgerReader:
    """Read access for hooks: ``ctx.ledger.succeeded("run_tests", ctx.session_id)``.

    It sees what earlier events committed, never the event being decided.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        # hooks may run in worker threads (the async core runs sync hooks off the loop)
        self._lock = _new_lock()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = connect_readonly(self.path)
            self._conn.row_factory = sqlite3.Row
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        try:
            with self._lock:
                return [dict(row) for row in self._connection().execute(sql, params)]
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"query failed: {exc}", path=self.path, kind="query") from None

    def value(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        rows = self.query(sql, params)
        return next(iter(rows[0].values())) if rows else None

    def succeeded(self, tool: str, session_id: str) -> bool:
        """Did a call of ``tool`` (a GLOB, e.g. ``run_*``) finish ``ok`` in this session?"""
        return bool(
            self.value(
                "SELECT EXISTS (SELECT 1 FROM tool_calls WHERE session_id = ? "
                "AND tool_name GLOB ? AND status = 'ok')",
                (session_id, tool),
            )
        )

    def calls(
        self, session_id: str, tool: str = "*", status: str | None = None
    ) -> list[dict[str, Any]]:
        sql = "SELECT * FROM tool_calls WHERE session_id = ? AND tool_name GLOB ?"
        params: list[Any] = [session_id, tool]
        if status is not None:
            sql += " AND status = ?"
            params.append(status)
        return self.query(sql + " ORDER BY id", params)

    def count_failures(self, session_id: str, tool: str, arguments_hash: str) -> int:
        """How often this exact input of ``tool`` already failed or was denied here."""
        return int(
            self.value(
                "SELECT count(*) FROM tool_calls WHERE session_id = ? AND tool_name = ? "
                "AND arguments_hash = ? AND status IN ('error', 'denied')",
                (session_id, tool, arguments_hash),
            )
            or 0
        )
