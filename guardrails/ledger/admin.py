"""What ``hookrails ledger ...`` computes, as library calls: the read and maintenance side.

Every function takes a ledger path (see :func:`ledger_path`) and raises
:class:`~guardrails.LedgerError` for anything the user should read as one line;
``cli.py`` only prints. Queries run on :func:`~guardrails.ledger.sqlite.connect_readonly`
connections; only :func:`prune_ledger` and :func:`recover_ledger` write.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import io
import json
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import LedgerError
from .sqlite import (
    SQL_DIR,
    Ledger,
    RecoverReport,
    _classify,
    _iso,
    connect_readonly,
    migrations,
    resolve_ledger_path,
    schema_sql,
    spool_paths,
)

__all__ = [
    "FORMATS",
    "TABLES",
    "BackupReport",
    "CallLine",
    "Catalog",
    "LedgerStatus",
    "PruneReport",
    "QueryResult",
    "SavedQuery",
    "ViewInfo",
    "backup_ledger",
    "export_table",
    "ledger_catalog",
    "ledger_path",
    "ledger_status",
    "prune_ledger",
    "recover_ledger",
    "run_query",
    "saved_queries",
    "saved_query",
    "tail_calls",
]

#: the tables ``export`` writes out (and ``status`` counts first)
TABLES = ("tool_calls", "events", "hook_runs", "sessions", "idempotency_keys")
#: output formats of ``query`` and ``export``
FORMATS = ("table", "json", "jsonl", "csv")
#: table cells longer than this are cut (``--max-width``; json/jsonl/csv are never cut)
DEFAULT_MAX_WIDTH = 80


def ledger_path(path: str | os.PathLike[str] | None = None, config: str | None = None) -> str:
    """The ledger file a command works on: ``path``, else ``$HOOKRAILS_LEDGER``, else the
    ``ledger:`` key of the definition in ``config``, else ``.hookrails/ledger.db``
    (the same order a :class:`~guardrails.Guard` uses to choose where it writes)."""
    definition = None
    if path is None and config is not None:
        from ..definition.model import AgentDefinition

        definition = AgentDefinition.from_file(config)
    return resolve_ledger_path(path, definition)


# --- connections -----------------------------------------------------------------------


def _missing(path: str) -> LedgerError:
    return LedgerError(
        "no ledger here yet (a Guard with a ledger creates it on its first event; "
        "choose another file with --ledger, --config or $HOOKRAILS_LEDGER)",
        path=path,
        kind="missing",
    )


def _connect(path: str, *, trusted: bool = False) -> sqlite3.Connection:
    """A read-only connection; ``trusted`` (our own SQL) also lifts the authorizer,
    so ``PRAGMA user_version`` and ``VACUUM INTO`` work. The file stays ``mode=ro``."""
    if not os.path.exists(path):
        raise _missing(path)
    if os.path.isdir(path):
        raise LedgerError("is a directory, not a ledger file", path=path, kind="corrupt")
    conn = connect_readonly(path)
    if trusted:
        conn.set_authorizer(None)
    return conn


@contextlib.contextmanager
def _reading(path: str) -> Iterator[sqlite3.Connection]:
    """A trusted read-only connection; SQLite errors become one-line LedgerErrors."""
    conn = _connect(path, trusted=True)
    try:
        yield conn
    except sqlite3.DatabaseError as exc:
        raise LedgerError(
            f"cannot read the ledger: {exc}", path=path, kind=_classify(exc)
        ) from None
    finally:
        conn.close()


def _tables(conn: sqlite3.Connection, kind: str = "table") -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name",
            (kind,),
        )
    ]


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
    with _reading(path) as conn:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
        present = [t for t in _tables(conn) if not t.startswith("_hookrails")]
        ordered = [t for t in TABLES if t in present] + [t for t in present if t not in TABLES]
        counts = {
            t: int(conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]) for t in ordered
        }
        views = _tables(conn, "view")
    spools = {s: _line_count(s) for s in _spools(path)}
    rejected = {
        s + ".rejected": _line_count(s + ".rejected")
        for s in dict.fromkeys(spool_paths(path))
        if os.path.isfile(s + ".rejected")
    }
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


# --- saved queries and views -----------------------------------------------------------


@dataclass(frozen=True)
class SavedQuery:
    """``ledger/queries/NAME.sql``: header comment lines, the first one the description,
    a ``-- params: :name ...`` line naming its parameters."""

    name: str
    description: str
    params: tuple[str, ...]
    sql: str


def _header(sql: str) -> list[str]:
    lines = []
    for line in sql.splitlines():
        if not line.startswith("--"):
            break
        lines.append(line[2:].strip())
    return lines


def _description(sql: str) -> str:
    head = _header(sql)
    return head[0] if head else ""


def _sql_files(kind: str) -> list[Path]:
    folder = Path(SQL_DIR, kind)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix == ".sql")


def saved_queries() -> list[SavedQuery]:
    """Every saved query shipped in ``ledger/queries``, by name."""
    found = []
    for p in _sql_files("queries"):
        sql = p.read_text(encoding="utf-8")
        params: list[str] = []
        for line in _header(sql):
            if line.lower().startswith("params:"):
                params += re.findall(r"[:@$](\w+)", line)
        found.append(SavedQuery(p.stem, _description(sql), tuple(params), sql))
    return found


def saved_query(name: str) -> SavedQuery:
    """The saved query ``name``; an unknown name lists the ones there are."""
    queries = saved_queries()
    for q in queries:
        if q.name == name:
            return q
    known = ", ".join(q.name for q in queries) or "none"
    raise LedgerError(f"no saved query {name!r}; saved queries: {known}", kind="query")


@dataclass(frozen=True)
class ViewInfo:
    name: str
    description: str
    columns: tuple[str, ...]


@dataclass
class Catalog:
    """The views (with their columns) and the saved queries one can run."""

    views: list[ViewInfo]
    queries: list[SavedQuery]
    #: where the views' columns were read: the ledger file, or this hookrails' schema
    source: str

    def lines(self) -> list[str]:
        out = [f"views (columns from {self.source}):"]
        if not self.views:
            out.append("  none")
        for v in self.views:
            out.append(f"  {v.name}  {v.description}".rstrip())
            out.append(f"      {', '.join(v.columns)}")
        out.append("saved queries (hookrails ledger query --saved NAME [-p name value]):")
        if not self.queries:
            out.append("  none")
        for q in self.queries:
            params = f"  [-p {' -p '.join(f'{p} …' for p in q.params)}]" if q.params else ""
            out.append(f"  {q.name}  {q.description}{params}".rstrip())
        return out


def ledger_catalog(path: str) -> Catalog:
    """Views and saved queries with their descriptions, and the views' columns:
    read from the ledger when it exists, else from the schema this hookrails creates."""
    descriptions = {
        p.stem: _description(p.read_text(encoding="utf-8")) for p in _sql_files("views")
    }
    if os.path.exists(path):
        source = path
        with _reading(path) as conn:
            views = _view_columns(conn)
    else:
        source = "the schema this hookrails creates (no ledger file yet)"
        conn = sqlite3.connect(":memory:")
        try:
            conn.executescript(schema_sql())
            views = _view_columns(conn)
        finally:
            conn.close()
    infos = [ViewInfo(name, descriptions.get(name, ""), cols) for name, cols in views.items()]
    return Catalog(infos, saved_queries(), source)


def _view_columns(conn: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    out = {}
    for name in _tables(conn, "view"):
        cur = conn.execute(f'SELECT * FROM "{name}" LIMIT 0')
        out[name] = tuple(d[0] for d in cur.description)
    return out


# --- queries ---------------------------------------------------------------------------------


@dataclass
class QueryResult:
    """Columns and a stream of rows; :meth:`render` formats them. The connection
    closes when the rows are exhausted (or the result is closed)."""

    columns: list[str]
    rows: Iterator[tuple[Any, ...]]
    #: rows read so far
    count: int = 0

    def __post_init__(self) -> None:
        self.rows = self._counted(self.rows)

    def _counted(self, rows: Iterator[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
        for row in rows:
            self.count += 1
            yield row

    def render(self, fmt: str = "table", *, max_width: int = DEFAULT_MAX_WIDTH) -> Iterator[str]:
        """Lines (or chunks) to print: ``table``, ``json`` (one array), ``jsonl``, ``csv``."""
        if fmt == "table":
            return _render_table(self.columns, self.rows, max_width)
        if fmt == "json":
            return _render_json(self.columns, self.rows)
        if fmt == "jsonl":
            return (_json_row(self.columns, row) for row in self.rows)
        if fmt == "csv":
            return _render_csv(self.columns, self.rows)
        raise LedgerError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")


def _json_value(value: Any) -> Any:
    if isinstance(value, bytes):  # as sqlite-utils writes blobs
        return {"$base64": True, "encoded": base64.b64encode(value).decode("ascii")}
    return value


def _json_row(columns: Sequence[str], row: Sequence[Any]) -> str:
    return json.dumps(
        {c: _json_value(v) for c, v in zip(columns, row, strict=True)}, ensure_ascii=False
    )


def _render_json(columns: list[str], rows: Iterator[tuple[Any, ...]]) -> Iterator[str]:
    previous: str | None = None
    for row in rows:
        if previous is not None:
            yield previous + ","
            previous = " " + _json_row(columns, row)
        else:
            previous = "[" + _json_row(columns, row)
    yield "[]" if previous is None else previous + "]"


def _render_csv(columns: list[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")

    def line(values: Sequence[Any]) -> str:
        writer.writerow(values)
        text = buf.getvalue()
        buf.seek(0)
        buf.truncate()
        return text.removesuffix("\n")

    yield line(columns)
    for row in rows:
        yield line(["" if v is None else _csv_value(v) for v in row])


def _csv_value(value: Any) -> Any:
    return base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value


def _cell(value: Any, max_width: int) -> str:
    if value is None:
        text = ""
    elif isinstance(value, bytes):
        text = f"<{len(value)} bytes>"
    elif isinstance(value, float):
        text = repr(value) if len(repr(value)) <= 12 else f"{value:.6g}"
    else:
        text = str(value)
    text = text.replace("\r\n", "\n").replace("\n", "\u21b5").replace("\t", " ")
    if max_width and len(text) > max_width:
        text = text[: max(max_width - 1, 1)] + "\u2026"
    return text


def _render_table(
    columns: list[str], rows: Iterator[tuple[Any, ...]], max_width: int
) -> Iterator[str]:
    import importlib

    tabulate = importlib.import_module("tabulate").tabulate  # installed with sqlite-utils
    data = list(rows)
    align = [
        "right"
        if any(r[i] is not None for r in data)
        and all(isinstance(r[i], int | float) for r in data if r[i] is not None)
        else "left"
        for i in range(len(columns))
    ]
    cells = [[_cell(v, max_width) for v in r] for r in data]
    text = tabulate(
        cells,
        headers=[_cell(c, max_width) for c in columns],
        tablefmt="simple",
        disable_numparse=True,
        colalign=align or None,
    )
    yield from str(text).splitlines()


def _query_error(exc: sqlite3.Error) -> LedgerError:
    text = str(exc)
    if (
        "not authorized" in text
        or "authorization denied" in text
        or "readonly database" in text
        or "read-only" in text
    ):
        return LedgerError(f"ledger queries are read-only: {text}", kind="query")
    m = re.search(r"binding parameter :?(\w+)", text)
    if m and "did not supply" in text:
        name = m.group(1)
        return LedgerError(f"missing query parameter :{name} (-p {name} VALUE)", kind="query")
    if "Incorrect number of bindings" in text or "has no name" in text:
        return LedgerError(
            "positional ? parameters are not supported; name them (:name) and pass -p name VALUE",
            kind="query",
        )
    return LedgerError(f"query failed: {text}", kind="query")


def run_query(
    path: str,
    sql: str | None = None,
    *,
    saved: str | None = None,
    params: dict[str, Any] | None = None,
) -> QueryResult:
    """Run one read-only statement (``sql``, or the saved query ``saved``) with named
    ``params``. Writes, ATTACH and PRAGMAs are refused (the connection's authorizer),
    so nothing in the file can change."""
    params = dict(params or {})
    if (sql is None) == (saved is None):
        raise LedgerError("give either SQL or --saved NAME (one of the two)", kind="query")
    if saved is not None:
        query = saved_query(saved)
        missing = [p for p in query.params if p not in params]
        if missing:
            need = " ".join(f"-p {p} VALUE" for p in missing)
            raise LedgerError(f"saved query {saved!r} needs {need}", kind="query")
        unknown = [p for p in params if p not in query.params]
        if unknown:
            takes = ", ".join(f":{p}" for p in query.params) or "no parameters"
            raise LedgerError(
                f"saved query {saved!r} has no parameter :{unknown[0]} (it takes {takes})",
                kind="query",
            )
        sql = query.sql
    assert sql is not None
    if not sql.strip():
        raise LedgerError("empty query", kind="query")
    import sqlite_utils

    conn = _connect(path)
    try:
        db = sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)
        cursor = db.execute(sql, params)
    except sqlite3.Error as exc:
        conn.close()
        raise _query_error(exc) from None
    columns = [d[0] for d in cursor.description or ()]
    return QueryResult(columns, _stream(conn, cursor))


def _stream(conn: sqlite3.Connection, cursor: sqlite3.Cursor) -> Iterator[tuple[Any, ...]]:
    try:
        while True:
            try:
                batch = cursor.fetchmany(500)
            except sqlite3.Error as exc:
                raise _query_error(exc) from None
            if not batch:
                return
            yield from (tuple(r) for r in batch)
    finally:
        conn.close()


def export_table(path: str, table: str = "tool_calls") -> QueryResult:
    """Every row of ``table``, in insertion order (``.render("jsonl")`` for JSON lines)."""
    if table not in TABLES:
        raise LedgerError(f"cannot export {table!r}; tables: {', '.join(TABLES)}", kind="query")
    return run_query(path, f"SELECT * FROM {table} ORDER BY rowid")


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
        return text + (f"  {_cell(detail, 120)}" if detail else "")


def _summary(tool: str, arguments: str | None, width: int = 60) -> str:
    """The call's primary argument (or its compact JSON), cut to ``width``."""
    from ..definition.matchers import BUILTIN_PRIMARY_ARGS

    try:
        args = json.loads(arguments) if arguments else {}
    except ValueError:
        args = arguments
    value: Any = args
    if isinstance(args, dict):
        primary = BUILTIN_PRIMARY_ARGS.get(tool, ("", ""))[0]
        if primary in args:
            value = args[primary]
        elif len(args) == 1:
            value = next(iter(args.values()))
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return _cell(text, width)


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
    conn = _connect(path)
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
        return _iso((time.time() if now is None else now) - keep_days * 86400)
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
    return _iso(moment.timestamp())


#: what prune deletes, in order: table -> condition (``:cutoff`` bound)
_PRUNE = {
    "tool_calls": "started_at < :cutoff",
    "hook_runs": "created_at < :cutoff",
    "events": "created_at < :cutoff",
    # sessions left with nothing: no call, hook run, event or idempotency key stays
    "sessions": (
        "last_seen_at < :cutoff "
        "AND NOT EXISTS (SELECT 1 FROM tool_calls t WHERE t.session_id = sessions.session_id "
        "AND t.started_at >= :cutoff) "
        "AND NOT EXISTS (SELECT 1 FROM hook_runs h WHERE h.session_id = sessions.session_id "
        "AND h.created_at >= :cutoff) "
        "AND NOT EXISTS (SELECT 1 FROM events e WHERE e.session_id = sessions.session_id "
        "AND e.created_at >= :cutoff) "
        "AND NOT EXISTS (SELECT 1 FROM idempotency_keys k "
        "WHERE k.session_id = sessions.session_id)"
    ),
}


@dataclass
class PruneReport:
    path: str
    cutoff: str
    dry_run: bool
    #: table -> rows deleted (or, with ``dry_run``, that would be)
    deleted: dict[str, int]

    def lines(self) -> list[str]:
        verb = "would delete" if self.dry_run else "deleted"
        out = [f"{verb} rows from before {self.cutoff}:"]
        out += [f"  {table:<11} {n:>8,}" for table, n in self.deleted.items()]
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
    """Delete tool calls, hook runs and events from before the cutoff (``before``: a date
    or ISO time, UTC unless it says otherwise; or ``keep_days`` back from now), and the
    sessions left with nothing, in one transaction. ``dry_run`` only counts."""
    cutoff = _cutoff(before, keep_days, now)
    with _reading(path) as conn:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        present = set(_tables(conn))
        if dry_run:
            _check_prunable(path, version, present)
            counts = {
                t: int(conn.execute(f"SELECT count(*) FROM {t} WHERE {w}", {"cutoff": cutoff})
                       .fetchone()[0])
                for t, w in _PRUNE.items()
            }  # fmt: skip
            return PruneReport(path, cutoff, True, counts)
    _check_prunable(path, version, present)
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout)
    except sqlite3.Error as exc:
        raise LedgerError(
            f"cannot open the ledger: {exc}", path=path, kind=_classify(exc)
        ) from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        conn.execute("BEGIN IMMEDIATE")
        try:
            counts = {
                t: conn.execute(f"DELETE FROM {t} WHERE {w}", {"cutoff": cutoff}).rowcount
                for t, w in _PRUNE.items()
            }
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        raise LedgerError(f"prune failed: {exc}", path=path, kind=_classify(exc)) from None
    finally:
        conn.close()
    return PruneReport(path, cutoff, False, counts)


def _check_prunable(path: str, version: int, present: set[str]) -> None:
    known = len(migrations())
    if version > known:
        raise LedgerError(
            f"this ledger has schema version {version}, newer than this hookrails knows "
            f"({known}); upgrade hookrails to prune it",
            path=path,
            kind="newer_schema",
        )
    missing = [t for t in (*_PRUNE, "idempotency_keys") if t not in present]
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
    dest = os.path.abspath(os.fspath(dest))
    if os.path.lexists(dest):
        raise LedgerError(
            "already exists; backup never overwrites (choose a new file or remove it)",
            path=dest,
        )
    folder = os.path.dirname(dest)
    if not os.path.isdir(folder):
        raise LedgerError(f"no such folder {folder}", path=dest)
    with _reading(path) as conn:
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
    if not os.path.exists(path) and not _spools(path):
        raise _missing(path)
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
