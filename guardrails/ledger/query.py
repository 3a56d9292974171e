"""``hookrails ledger query`` as a library call: read-only queries, saved queries, the
views' catalog, and the output formats (table, json, jsonl, csv).

Queries run on :func:`~guardrails.ledger.reader.connect_readonly` connections, so
nothing in the file can change; :mod:`.admin` (status, tail, prune, backup) reads
through the same :func:`connect` and :func:`reading`.
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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import LedgerError
from .common import error_kind, escape_surrogates, is_url
from .migrations import SQL_DIR, dialect_folder, schema_sql
from .reader import connect_readonly

__all__ = [
    "DEFAULT_MAX_WIDTH",
    "DEFAULT_TIMEOUT",
    "FORMATS",
    "Catalog",
    "QueryResult",
    "SavedQuery",
    "ViewInfo",
    "cell",
    "connect",
    "ledger_catalog",
    "missing_ledger",
    "reading",
    "run_query",
    "saved_queries",
    "saved_query",
    "schema_names",
]

#: output formats of ``query`` and ``export``
FORMATS = ("table", "json", "jsonl", "csv")
#: table cells longer than this are cut (``--max-width``; json/jsonl/csv are never cut)
DEFAULT_MAX_WIDTH = 80
#: seconds of SQLite work one ``ledger query`` may take (``--timeout``; 0: no limit)
DEFAULT_TIMEOUT = 30.0
#: SQLite VM instructions between two looks at the clock (a few microseconds of work)
_PROGRESS_STEPS = 10_000


# --- connections -----------------------------------------------------------------------


def missing_ledger(path: str) -> LedgerError:
    """What every command says when there is no ledger file at ``path``."""
    return LedgerError(
        "no ledger here yet (a Guard with a ledger creates it on its first event; "
        "choose another file with --ledger, --config or $HOOKRAILS_LEDGER)",
        path=path,
        kind="missing",
    )


def connect(path: str, *, trusted: bool = False) -> sqlite3.Connection:
    """A read-only connection; ``trusted`` (our own SQL) also lifts the authorizer,
    so ``PRAGMA user_version`` and ``VACUUM INTO`` work. The file stays ``mode=ro``."""
    if not os.path.exists(path):
        raise missing_ledger(path)
    if os.path.isdir(path):
        raise LedgerError("is a directory, not a ledger file", path=path, kind="corrupt")
    conn = connect_readonly(path)
    if trusted:
        conn.set_authorizer(None)
    return conn


@contextlib.contextmanager
def reading(path: str) -> Iterator[sqlite3.Connection]:
    """A trusted read-only connection; SQLite errors become one-line LedgerErrors."""
    conn = connect(path, trusted=True)
    try:
        yield conn
    except sqlite3.DatabaseError as exc:
        raise LedgerError(
            f"cannot read the ledger: {exc}", path=path, kind=error_kind(exc)
        ) from None
    finally:
        conn.close()


def schema_names(conn: sqlite3.Connection, kind: str = "table") -> list[str]:
    """Names of the tables (or views, ``kind="view"``) in the file, by name."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name",
            (kind,),
        )
    ]


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


def saved_queries(dialect: str = "sqlite") -> list[SavedQuery]:
    """Every saved query shipped in ``ledger/queries``, by name; on PostgreSQL the ones
    whose SQL must differ come from ``ledger/postgres/queries``."""
    found = []
    for p in _sql_files("queries"):
        own = Path(dialect_folder("queries", dialect), p.name)
        sql = (own if dialect != "sqlite" and own.is_file() else p).read_text(encoding="utf-8")
        params: list[str] = []
        for line in _header(sql):
            if line.lower().startswith("params:"):
                params += re.findall(r"[:@$](\w+)", line)
        found.append(SavedQuery(p.stem, _description(sql), tuple(params), sql))
    return found


def saved_query(name: str, dialect: str = "sqlite") -> SavedQuery:
    """The saved query ``name``; an unknown name lists the ones there are."""
    queries = saved_queries(dialect)
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
    if is_url(path):
        from .common import safe_url
        from .postgres_query import catalog_views

        source = safe_url(path)
        views = catalog_views(path)
    elif os.path.exists(path):
        source = path
        with reading(path) as conn:
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
    for name in schema_names(conn, "view"):
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


def cell(value: Any, max_width: int) -> str:
    if value is None:
        text = ""
    elif isinstance(value, bytes):
        text = f"<{len(value)} bytes>"
    elif isinstance(value, float):
        text = repr(value) if len(repr(value)) <= 12 else f"{value:.6g}"
    else:
        text = escape_surrogates(str(value))  # a decoded JSON string may hold one
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
    cells = [[cell(v, max_width) for v in r] for r in data]
    text = tabulate(
        cells,
        headers=[cell(c, max_width) for c in columns],
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


class _Budget:
    """A query's time limit, as a progress handler: SQLite stops the statement once it
    has worked on it for ``limit`` seconds in all. Only the time inside SQLite counts
    (``start``/``stop`` around each step), not the time a reader (a pager) takes."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.spent = 0.0
        self.since: float | None = None
        self.hit = False

    def start(self) -> None:
        self.since = time.monotonic()

    def stop(self) -> None:
        if self.since is not None:
            self.spent += time.monotonic() - self.since
            self.since = None

    def __call__(self) -> int:
        if self.since is not None and self.spent + time.monotonic() - self.since > self.limit:
            self.hit = True
            return 1  # non-zero: SQLite interrupts the statement
        return 0

    def error(self) -> LedgerError:
        return LedgerError(
            f"query stopped after {self.limit:g} s of work, the --timeout limit (a recursive "
            "CTE needs a LIMIT or a condition that ends it); raise it with --timeout SECONDS, "
            "or --timeout 0 for no limit",
            kind="query",
        )


def _text(data: bytes) -> str:
    """Text SQLite hands back. ``json_extract`` of a string stored with a lone surrogate
    (``"\\ud800"``, docs/ledger.md) returns bytes that are not UTF-8: they come back as
    the ``\\ud800`` escape instead of failing the whole query."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return escape_surrogates(data.decode("utf-8", "surrogatepass"))
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


def run_query(
    path: str,
    sql: str | None = None,
    *,
    saved: str | None = None,
    params: dict[str, Any] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> QueryResult:
    """Run one read-only statement (``sql``, or the saved query ``saved``) with named
    ``params``. Writes, ATTACH and PRAGMAs are refused (the connection's authorizer),
    so nothing in the file can change. ``timeout``: seconds of SQLite work before the
    query is stopped with a :class:`LedgerError` saying so (None or 0: no limit)."""
    params = dict(params or {})
    if (sql is None) == (saved is None):
        raise LedgerError("give either SQL or --saved NAME (one of the two)", kind="query")
    if timeout is not None and timeout < 0:
        raise LedgerError("--timeout must be 0 (no limit) or more seconds", kind="query")
    if saved is not None:
        query = saved_query(saved, "postgres" if is_url(path) else "sqlite")
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
    if is_url(path):  # a READ ONLY transaction with a statement timeout
        from .postgres_query import run_query as run_postgres

        return QueryResult(*run_postgres(path, sql, params, timeout or None))
    import sqlite_utils

    conn = connect(path)
    conn.text_factory = _text
    budget = _Budget(timeout) if timeout else None
    if budget is not None:
        conn.set_progress_handler(budget, _PROGRESS_STEPS)
        budget.start()
    try:
        db = sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)
        cursor = db.execute(sql, params)
    except sqlite3.Error as exc:
        conn.close()
        raise budget.error() if budget and budget.hit else _query_error(exc) from None
    finally:
        if budget is not None:
            budget.stop()
    columns = [d[0] for d in cursor.description or ()]
    return QueryResult(columns, _stream(conn, cursor, budget))


def _stream(
    conn: sqlite3.Connection, cursor: sqlite3.Cursor, budget: _Budget | None = None
) -> Iterator[tuple[Any, ...]]:
    try:
        while True:
            if budget is not None:
                budget.start()
            try:
                batch = cursor.fetchmany(500)
            except sqlite3.Error as exc:
                raise budget.error() if budget and budget.hit else _query_error(exc) from None
            finally:
                if budget is not None:
                    budget.stop()
            if not batch:
                return
            yield from (tuple(r) for r in batch)
    finally:
        conn.close()
