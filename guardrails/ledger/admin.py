"""What ``hookrails ledger ...`` computes, as library calls: the maintenance side.

Every function takes a ledger path (see :func:`ledger_path`) and raises
:class:`~guardrails.LedgerError` for anything the user should read as one line;
``cli.py`` only prints. Reads run on read-only connections (:mod:`.query`, which
also holds ``run_query`` and the catalog); only :func:`prune_ledger` and
:func:`recover_ledger` write.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..errors import LedgerError
from .common import error_kind, is_url, iso_time, resolve_ledger_path, safe_url
from .migrations import migrations
from .query import QueryResult, cell, connect, missing_ledger, reading, run_query, schema_names
from .rollup import invalidate, is_rollup
from .spool import RecoverReport, spool_paths
from .sqlite import Ledger

__all__ = [
    "TABLES",
    "BackupReport",
    "CallLine",
    "LedgerStatus",
    "PruneReport",
    "backup_ledger",
    "export_table",
    "ledger_path",
    "ledger_status",
    "prune_ledger",
    "recover_ledger",
    "tail_calls",
]

#: the tables ``export`` writes out (and ``status`` counts first)
TABLES = ("tool_calls", "events", "hook_runs", "sessions", "idempotency_keys")


def ledger_path(path: str | os.PathLike[str] | None = None, config: str | None = None) -> str:
    """The ledger file a command works on: ``path``, else ``$HOOKRAILS_LEDGER``, else the
    ``ledger:`` key of the definition in ``config``, else ``.hookrails/ledger.db``
    (the same order a :class:`~guardrails.Guard` uses to choose where it writes)."""
    definition = None
    if path is None and config is not None:
        from ..definition.model import AgentDefinition

        definition = AgentDefinition.from_file(config)
    return resolve_ledger_path(path, definition)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _spools(path: str) -> list[str]:
    """Spool files with records for ``path`` waiting for ``recover`` (an ``.importing``
    one is left by a recover that stopped before it committed)."""
    found = []
    for spool in dict.fromkeys(spool_paths(path)):
        found += [f for f in (spool, spool + ".importing") if os.path.isfile(f)]
    return found


def _spool_counts(path: str) -> tuple[dict[str, int], dict[str, int]]:
    """Records waiting in each spool of ``path``, and in each ``.rejected`` file beside one."""
    spools = {s: _line_count(s) for s in _spools(path)}
    rejected = {
        s + ".rejected": _line_count(s + ".rejected")
        for s in dict.fromkeys(spool_paths(path))
        if os.path.isfile(s + ".rejected")
    }
    return spools, rejected


def _line_count(path: str) -> int:
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


# --- status ------------------------------------------------------------------------------


@dataclass
class LedgerStatus:
    path: str
    size: int
    wal_size: int
    journal_mode: str
    schema_version: int
    known_version: int
    tables: dict[str, int]
    views: list[str]
    #: spool file -> records waiting for ``recover``
    spools: dict[str, int] = field(default_factory=dict)
    #: ``<spool>.rejected`` file -> spooled records recover could not import
    rejected: dict[str, int] = field(default_factory=dict)

    @property
    def schema(self) -> str:
        """``current``, ``older`` (the next write migrates it) or ``newer`` (upgrade)."""
        if self.schema_version == self.known_version:
            return "current"
        return "older" if self.schema_version < self.known_version else "newer"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "schema": self.schema}

    def lines(self) -> list[str]:
        note = {
            "current": "",
            "older": " (older: the next Guard that writes migrates it)",
            "newer": " (newer than this hookrails: upgrade it to write here)",
        }[self.schema]
        out = [
            f"ledger: {self.path}",
            f"size: {self.size:,} bytes + {self.wal_size:,} bytes WAL "
            f"(journal_mode {self.journal_mode})",
            f"schema: version {self.schema_version}, this hookrails knows {self.known_version}"
            + note,
            "tables:",
        ]
        width = max((len(t) for t in self.tables), default=0)
        out += [f"  {name:<{width}}  {count:>8,}" for name, count in self.tables.items()]
        out.append(f"views: {', '.join(self.views) if self.views else 'none'}")
        if not self.spools:
            out.append("spool: none")
        for spool, n in self.spools.items():
            out.append(f"spool: {spool}: {n} records waiting (run `hookrails ledger recover`)")
        for spool, n in self.rejected.items():
            out.append(f"rejected: {spool}: {n} spooled records recover could not import")
        return out


def ledger_status(path: str) -> LedgerStatus:
    """Row counts, file and WAL size, schema version and any spool, read-only."""
    if is_url(path):
        return _postgres_status(path)
    with reading(path) as conn:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
        present = [t for t in schema_names(conn) if not t.startswith("_hookrails")]
        present = [t for t in present if not is_rollup(t)]
        ordered = [t for t in TABLES if t in present] + [t for t in present if t not in TABLES]
        counts = {
            t: int(conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]) for t in ordered
        }
        views = schema_names(conn, "view")
    spools, rejected = _spool_counts(path)
    return LedgerStatus(
        path=path,
        size=_size(path),
        wal_size=_size(path + "-wal"),
        journal_mode=mode,
        schema_version=version,
        known_version=len(migrations()),
        tables=counts,
        views=views,
        spools=spools,
        rejected=rejected,
    )


def _postgres_status(url: str) -> LedgerStatus:
    from .postgres_query import status

    found = status(url, TABLES)  # one connection: the views' names too
    spools, rejected = _spool_counts(url)
    return LedgerStatus(
        path=safe_url(url),
        size=found["size"],
        wal_size=0,
        journal_mode="postgresql",
        schema_version=found["version"],
        known_version=len(migrations("postgres")),
        tables=found["tables"],
        views=found["views"],
        spools=spools,
        rejected=rejected,
    )


def export_table(path: str, table: str = "tool_calls") -> QueryResult:
    """Every row of ``table``, in insertion order (``.render("jsonl")`` for JSON lines)."""
    if table not in TABLES:
        raise LedgerError(f"cannot export {table!r}; tables: {', '.join(TABLES)}", kind="query")
    if is_url(path):
        from .postgres_query import export_rows

        return QueryResult(*export_rows(path, table))
    order = "id" if table == "hook_runs" else "rowid"  # a view (over hook_run_sets): no rowid
    return run_query(path, f"SELECT * FROM {table} ORDER BY {order}", timeout=None)


# --- tail ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallLine:
    """One ``tool_calls`` row, as ``tail`` shows it."""

    id: int
    started_at: str
    session_id: str
    tool_name: str
    arguments: str | None
    status: str
    decision: str | None
    reason: str | None
    error: str | None
    duration_ms: float | None

    def line(self) -> str:
        when = self.started_at.replace("T", " ")[:19]
        ms = self.duration_ms
        duration = ""
        if ms is not None and self.status not in ("denied", "pending"):  # it ran
            duration = f"{ms:,.0f} ms" if ms >= 100 else f"{ms:.2f} ms"
        detail = self.error if self.status in ("error", "interrupted") else self.reason
        call = f"{self.tool_name}({_summary(self.tool_name, self.arguments)})"
        text = (
            f"{when}  {self.session_id[:8]:<8}  {self.status:<11} {self.decision or '-':<5} "
            f"{duration:>10}  {call}"
        )
        return text + (f"  {cell(detail, 120)}" if detail else "")


def _summary(tool: str, arguments: str | None, width: int = 60) -> str:
    """The call's primary argument (or its compact JSON), cut to ``width``."""
    from ..definition.matchers import BUILTIN_PRIMARY_ARGS

    try:
        args = json.loads(arguments) if arguments else {}
    except ValueError:
        args = arguments
    value: Any = args
    if isinstance(args, dict) and args.get("_truncated") is True:  # records.truncation_marker
        value = f"[{args.get('size')} bytes, truncated] {args.get('head')}"
    elif isinstance(args, dict):
        primary = BUILTIN_PRIMARY_ARGS.get(tool, ("", ""))[0]
        if primary in args:
            value = args[primary]
        elif len(args) == 1:
            value = next(iter(args.values()))
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return cell(text, width)


_CALL_COLUMNS = (
    "id, started_at, session_id, tool_name, final_arguments, status, decision, reason, "
    "CASE WHEN error_type IS NULL THEN error_message "
    "ELSE error_type || ': ' || COALESCE(error_message, '') END, duration_ms"
)


def tail_calls(
    path: str,
    n: int = 20,
    *,
    follow: bool = False,
    interval: float = 1.0,
    stop: Callable[[], bool] | None = None,
    max_polls: int | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[CallLine]:
    """The latest ``n`` tool calls, oldest first; with ``follow``, then every new call
    (polling by id every ``interval`` seconds) until ``stop()`` is true or ``max_polls``
    polls have run. A call shown while ``pending`` is shown again once it finishes."""
    if n < 0:
        raise LedgerError("-n must be 0 or more", kind="query")
    if is_url(path):  # new calls wake it (LISTEN/NOTIFY), or the interval
        from .postgres_query import tail_rows

        yield from tail_rows(
            path,
            _CALL_COLUMNS.replace("final_arguments", "final_arguments::text"),
            n,
            follow=follow,
            interval=interval,
            stop=stop,
            max_polls=max_polls,
            make=lambda row: CallLine(*row),
        )
        return
    conn = connect(path)
    try:
        try:
            rows = conn.execute(
                f"SELECT {_CALL_COLUMNS} FROM tool_calls ORDER BY id DESC LIMIT ?", (n,)
            ).fetchall()
            last = conn.execute("SELECT coalesce(max(id), 0) FROM tool_calls").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"cannot read the ledger: {exc}", path=path) from None
        pending: set[int] = set()
        for row in reversed(rows):
            call = CallLine(*row)
            if call.status == "pending":
                pending.add(call.id)
            yield call
        polls = 0
        while follow and not (stop is not None and stop()):
            if max_polls is not None and polls >= max_polls:
                return
            sleep(interval)
            polls += 1
            try:
                new = conn.execute(
                    f"SELECT {_CALL_COLUMNS} FROM tool_calls WHERE id > ? ORDER BY id", (last,)
                ).fetchall()
                done = []
                if pending:
                    marks = ",".join("?" * len(pending))
                    done = conn.execute(
                        f"SELECT {_CALL_COLUMNS} FROM tool_calls WHERE id IN ({marks}) "
                        "AND status != 'pending' ORDER BY id",
                        sorted(pending),
                    ).fetchall()
            except sqlite3.OperationalError as exc:  # busy or locked for a moment: next poll
                if "locked" in str(exc) or "busy" in str(exc):
                    continue
                raise LedgerError(f"cannot read the ledger: {exc}", path=path) from None
            for row in done:
                call = CallLine(*row)
                pending.discard(call.id)
                yield call
            for row in new:
                call = CallLine(*row)
                last = max(last, call.id)
                if call.status == "pending":
                    pending.add(call.id)
                yield call
    finally:
        conn.close()


# --- maintenance -------------------------------------------------------------------------


def _cutoff(before: str | None, keep_days: float | None, now: float | None) -> str:
    if (before is None) == (keep_days is None):
        raise LedgerError("give exactly one of --before DATE and --keep-days N", kind="query")
    if keep_days is not None:
        if keep_days < 0:
            raise LedgerError("--keep-days must be 0 or more", kind="query")
        return iso_time((time.time() if now is None else now) - keep_days * 86400)
    assert before is not None
    text = before.strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            moment = datetime.fromisoformat(text).replace(tzinfo=UTC)
        else:
            moment = datetime.fromisoformat(text.replace("z", "Z"))
            if moment.tzinfo is None:  # the ledger's times are UTC; so is a bare time
                moment = moment.replace(tzinfo=UTC)
    except ValueError:
        raise LedgerError(
            f"--before {before!r} is not a date; expected 2026-01-31 or 2026-01-31T12:00:00Z",
            kind="query",
        ) from None
    return iso_time(moment.timestamp())


#: what prune deletes, in order: table -> condition (``:cutoff`` bound)
_PRUNE = {
    "tool_calls": "started_at < :cutoff",
    "hook_run_sets": "created_at < :cutoff",
    "events": "created_at < :cutoff",
    "session_state": "updated_at < :cutoff",
    # sessions left with nothing: no call, hook run, event or idempotency key stays
    "sessions": (
        "last_seen_at < :cutoff "
        "AND NOT EXISTS (SELECT 1 FROM tool_calls t WHERE t.session_id = sessions.session_id "
        "AND t.started_at >= :cutoff) "
        "AND NOT EXISTS (SELECT 1 FROM hook_run_sets h WHERE h.session_id = sessions.session_id "
        "AND h.created_at >= :cutoff) "
        "AND NOT EXISTS (SELECT 1 FROM events e WHERE e.session_id = sessions.session_id "
        "AND e.created_at >= :cutoff) "
        "AND NOT EXISTS (SELECT 1 FROM idempotency_keys k "
        "WHERE k.session_id = sessions.session_id)"
    ),
}

#: tables a later migration added: a file not opened by this hookrails yet may lack them
_LATER = frozenset({"session_state", "hook_run_sets"})


def _prune_plan(present: set[str]) -> dict[str, str]:
    """:data:`_PRUNE` for the tables this file has: one not opened by a hookrails with
    schema 7 yet keeps its hook runs in the ``hook_runs`` table, one row per run."""
    plan = {t: w for t, w in _PRUNE.items() if t in present or t not in _LATER}
    if "hook_run_sets" not in present and "hook_runs" in present:
        plan = {("hook_runs" if t == "hook_run_sets" else t): w for t, w in _PRUNE.items()
                if t in present or t not in _LATER or t == "hook_run_sets"}  # fmt: skip
        plan["sessions"] = plan["sessions"].replace("hook_run_sets h", "hook_runs h")
    return plan


@dataclass
class PruneReport:
    path: str
    cutoff: str
    dry_run: bool
    #: table -> rows deleted (or, with ``dry_run``, that would be)
    deleted: dict[str, int]
    #: halt markers of sessions the file no longer holds halted, removed (or would be)
    halt_markers: int = 0

    def lines(self) -> list[str]:
        verb = "would delete" if self.dry_run else "deleted"
        out = [f"{verb} rows from before {self.cutoff}:"]
        out += [f"  {table:<11} {n:>8,}" for table, n in self.deleted.items()]
        if self.halt_markers:
            out.append(f"{verb} {self.halt_markers:,} halt markers of sessions no longer halted")
        if self.dry_run:
            out.append("(dry run: nothing changed)")
        return out


def prune_ledger(
    path: str,
    *,
    before: str | None = None,
    keep_days: float | None = None,
    dry_run: bool = False,
    now: float | None = None,
    busy_timeout: float = 5.0,
) -> PruneReport:
    """Delete tool calls, hook runs, events and session state from before the cutoff
    (``before``: a date or ISO time, UTC unless it says otherwise; or ``keep_days`` back
    from now), and the sessions left with nothing, in one transaction. ``dry_run`` only
    counts. A file from before ``session_state`` has none to delete."""
    cutoff = _cutoff(before, keep_days, now)
    if is_url(path):
        from . import postgres_query

        def check(version: int, present: set[str]) -> None:
            _check_prunable(safe_url(path), version, present)

        deleted = postgres_query.prune(path, _PRUNE, cutoff, dry_run, check)
        return PruneReport(safe_url(path), cutoff, dry_run, deleted)
    with reading(path) as conn:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        present = set(schema_names(conn))
        prune = _prune_plan(present)
        if dry_run:
            _check_prunable(path, version, present)
            counts = {
                t: int(conn.execute(f"SELECT count(*) FROM {t} WHERE {w}", {"cutoff": cutoff})
                       .fetchone()[0])
                for t, w in prune.items()
            }  # fmt: skip
            return PruneReport(path, cutoff, True, counts, _prune_halts(path, cutoff))
    _check_prunable(path, version, present)
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout)
    except sqlite3.Error as exc:
        raise LedgerError(
            f"cannot open the ledger: {exc}", path=path, kind=error_kind(exc)
        ) from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        conn.execute("BEGIN IMMEDIATE")
        try:
            counts = {
                t: conn.execute(f"DELETE FROM {t} WHERE {w}", {"cutoff": cutoff}).rowcount
                for t, w in prune.items()
            }
            invalidate(conn)  # rows below the rollups' marks are gone
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        raise LedgerError(f"prune failed: {exc}", path=path, kind=error_kind(exc)) from None
    finally:
        conn.close()
    marks = _prune_halts(path, None, busy_timeout)
    return PruneReport(path, cutoff, False, counts, marks)


def _prune_halts(path: str, dry_run_cutoff: str | None, busy_timeout: float = 5.0) -> int:
    """:func:`.journal_import.prune_halts` after the rows went; one that fails leaves the
    markers (each only sends its session's calls to the file) and says so."""
    from .journal_import import prune_halts

    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout)
    except sqlite3.Error:
        return 0
    try:
        return prune_halts(conn, path, busy_timeout, dry_run_cutoff)
    except (OSError, sqlite3.Error) as exc:
        from .common import logger

        logger().warning("hookrails ledger prune: the halt markers of %s stay (%s)", path, exc)
        return 0
    finally:
        conn.close()


def _check_prunable(path: str, version: int, present: set[str]) -> None:
    known = len(migrations())
    if version > known:
        raise LedgerError(
            f"this ledger has schema version {version}, newer than this hookrails knows "
            f"({known}); upgrade hookrails to prune it",
            path=path,
            kind="newer_schema",
        )
    missing = [t for t in (*_PRUNE, "idempotency_keys") if t not in present and t not in _LATER]
    if not present & {"hook_run_sets", "hook_runs"}:  # before schema 7: the hook_runs table
        missing.append("hook_run_sets")
    if missing:
        raise LedgerError(
            f"not a hookrails ledger (no table {missing[0]})", path=path, kind="corrupt"
        )


@dataclass
class BackupReport:
    path: str
    dest: str
    size: int


def backup_ledger(path: str, dest: str | os.PathLike[str]) -> BackupReport:
    """A consistent, compacted copy of the ledger at ``dest`` (``VACUUM INTO``), safe
    while agents write. Never overwrites: an existing ``dest`` is an error."""
    if is_url(path):
        raise LedgerError(
            "backup copies a SQLite file; for a PostgreSQL ledger use pg_dump, or "
            "`hookrails ledger copy URL FILE` for a SQLite copy",
            path=safe_url(path),
        )
    dest = os.path.abspath(os.fspath(dest))
    if os.path.lexists(dest):
        raise LedgerError(
            "already exists; backup never overwrites (choose a new file or remove it)",
            path=dest,
        )
    folder = os.path.dirname(dest)
    if not os.path.isdir(folder):
        raise LedgerError(f"no such folder {folder}", path=dest)
    with reading(path) as conn:
        try:
            conn.execute("VACUUM INTO ?", (dest,))
        except sqlite3.OperationalError as exc:
            raise LedgerError(f"backup failed: {exc}", path=dest) from None
    return BackupReport(path, dest, _size(dest))


def recover_ledger(path: str, older_than_minutes: float | None = None) -> RecoverReport:
    """:meth:`Ledger.recover <guardrails.Ledger.recover>`: import the spool, then mark
    ``pending`` calls of ended processes (or, with ``older_than_minutes``, older ones)
    ``interrupted``. A missing file is created only when there is a spool to import."""
    if older_than_minutes is not None and older_than_minutes < 0:
        raise LedgerError("--older-than must be 0 or more minutes", kind="query")
    if not is_url(path) and not os.path.exists(path) and not _spools(path):
        raise missing_ledger(path)
    with _quiet_ledger_log(), Ledger(path) as ledger:  # the report says it all, once
        return ledger.recover(
            older_than=None if older_than_minutes is None else older_than_minutes * 60
        )


@contextlib.contextmanager
def _quiet_ledger_log() -> Iterator[None]:
    """Hold back the Guard-oriented warnings (``records go to the spool until recover``)."""
    import logging

    logger = logging.getLogger("guardrails.ledger")
    drop = logging.Filter("-")  # matches no logger name: every record is dropped
    logger.addFilter(drop)
    try:
        yield
    finally:
        logger.removeFilter(drop)
