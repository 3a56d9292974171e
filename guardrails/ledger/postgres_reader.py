"""The read side of a PostgreSQL ledger: read-only connections and :class:`PostgresReader`.

Queries read as they do on SQLite: times come back as the ledger's ISO text
(``2026-01-31T12:00:00.000Z``), JSON columns as the text written, ``numeric`` as
``float`` and booleans as ``1``/``0`` (:func:`sqlite_like`); ``?`` and ``:name``
parameters are translated to psycopg's (:func:`translate`). Every query runs in a
``READ ONLY`` transaction, and ``hookrails ledger query`` adds a statement timeout and
runs one prepared statement (one command, never a script: :func:`readonly_cursor`).
"""

from __future__ import annotations

from _thread import allocate_lock as _new_lock

from ..errors import LedgerError
from .common import safe_url
from .reader import HOOK_OUTCOMES, STATS, LedgerReader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    import psycopg

__all__ = ["PostgresReader", "connect", "readonly_cursor", "sqlite_like", "translate"]

#: a statement's first word that a ledger query may start with (the rest is refused before
#: PostgreSQL sees it; the READ ONLY transaction refuses writes hidden deeper)
READ_WORDS = frozenset({"select", "with", "values", "table", "explain", "show"})
_translated: dict[str, str] = {}


def translate(sql: str) -> str:
    """SQLite-style parameters (``?``, ``:name``, ``@name``, ``$name``) as psycopg's
    (``%s``, ``%(name)s``), ``%`` doubled; strings, quoted names and comments are kept,
    and so is a ``::type`` cast."""
    done = _translated.get(sql)
    if done is not None:
        return done
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"":
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            out.append(sql[i : j + 1].replace("%", "%%"))
            i = j + 1
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            j = n if j < 0 else j
            out.append(sql[i:j].replace("%", "%%"))
            i = j
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(sql[i:j].replace("%", "%%"))
            i = j
        elif c == "%":
            out.append("%%")
            i += 1
        elif c == "?":
            out.append("%s")
            i += 1
        elif c == ":" and sql.startswith("::", i):
            out.append("::")
            i += 2
        elif c in ":@$" and i + 1 < n and (sql[i + 1].isalpha() or sql[i + 1] == "_"):
            j = i + 1
            while j < n and (sql[j].isalnum() or sql[j] == "_"):
                j += 1
            out.append(f"%({sql[i + 1 : j]})s")
            i = j
        else:
            out.append(c)
            i += 1
    done = "".join(out)
    if len(_translated) < 512:
        _translated[sql] = done
    return done


def sqlite_like(conn: psycopg.Connection[Any]) -> None:
    """Make ``conn`` answer as the SQLite ledger does: ISO text times, JSON as text,
    ``numeric`` as float, booleans as 1/0."""
    from psycopg.adapt import Loader
    from psycopg.types.numeric import FloatLoader
    from psycopg.types.string import TextLoader

    class IsoLoader(Loader):
        def load(self, data: Any) -> str:
            text = bytes(data).decode("ascii")  # 2026-01-31 12:00:00.123456+00 (TimeZone=UTC)
            cut = len(text) - 3 if text[-3:-2] in "+-" else len(text)
            clock = text[11:cut]
            frac = clock[9:12] if len(clock) > 8 else ""
            return f"{text[:10]}T{clock[:8]}.{frac.ljust(3, '0')}Z"

    class IntBoolLoader(Loader):
        def load(self, data: Any) -> int:
            return 1 if bytes(data) == b"t" else 0

    adapters = conn.adapters
    adapters.register_loader("timestamptz", IsoLoader)
    adapters.register_loader("json", TextLoader)
    adapters.register_loader("jsonb", TextLoader)
    adapters.register_loader("numeric", FloatLoader)
    adapters.register_loader("bool", IntBoolLoader)


def connect(url: str, *, timeout: float = 10.0) -> psycopg.Connection[Any]:
    """A read-only connection (every transaction READ ONLY) that answers like SQLite."""
    import psycopg

    try:
        conn = psycopg.connect(
            url,
            connect_timeout=max(1, int(timeout)),
            options="-c TimeZone=UTC -c default_transaction_read_only=on",
            application_name="hookrails-reader",
        )
    except psycopg.Error as exc:
        raise LedgerError(
            f"cannot reach the ledger: {_first_line(exc)}", path=safe_url(url), kind="error"
        ) from None
    conn.read_only = True
    sqlite_like(conn)
    return conn


def readonly_cursor(
    conn: psycopg.Connection[Any], sql: str, params: dict[str, Any], timeout: float | None
) -> psycopg.Cursor[Any]:
    """Run one statement of a ledger query in a READ ONLY transaction with a statement
    timeout (seconds; None or 0: none), as a prepared statement (one command: a script
    that would end the transaction and start another is refused)."""
    first = _strip_comments(sql).lstrip().lstrip("(").split(None, 1)
    word = (first or [""])[0].lower().rstrip(";(")
    if word not in READ_WORDS or (word == "explain" and "analyze" in sql.lower()):
        raise LedgerError(
            f"ledger queries are read-only: {word.upper() or 'this'} statements are refused",
            kind="query",
        )
    cur = conn.cursor()
    ms = int((timeout or 0) * 1000)
    cur.execute("SELECT set_config('statement_timeout', %s, true)", (str(ms),))
    cur.execute(translate(sql), params, prepare=True)
    return cur


def _strip_comments(sql: str) -> str:
    import re

    return re.sub(r"--[^\n]*|/\*.*?\*/", " ", sql, flags=re.S)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class PostgresReader(LedgerReader):
    """:class:`~.reader.LedgerReader` on PostgreSQL: the same named queries (their SQL
    translated, the few SQLite-only ones written again), one read-only connection."""

    _TOOL_GLOB = "hookrails_glob(tool_name, ?)"
    _HOOK_OUTCOMES = HOOK_OUTCOMES.format(same="IS NOT DISTINCT FROM")

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self._pg: psycopg.Connection[Any] | None = None
        self._pg_lock = _new_lock()

    def close(self) -> None:
        with self._pg_lock:
            if self._pg is not None:
                self._pg.close()
                self._pg = None

    stats_queries = {
        **STATS,
        "calls_by_status": (
            "SELECT status, count(*) AS calls FROM tool_calls GROUP BY status "
            "ORDER BY calls DESC, status"
        ),
        "denials_by_hook": (
            "SELECT hook, matcher, hook_outcome, count(*) AS denials, max(started_at) AS last_at "
            "FROM denials GROUP BY hook, matcher, hook_outcome ORDER BY denials DESC, hook "
            "LIMIT :limit"
        ),
    }

    def refresh_rollups(self, limit: int | None = None) -> int:
        """Nothing to do: PostgreSQL's views aggregate their tables (no rollups)."""
        return 0

    def _section(self, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        return self.query(sql, params)  # the server runs them; one connection, in turn

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        import psycopg
        from psycopg.rows import dict_row

        with self._pg_lock:
            try:
                if self._pg is None or self._pg.closed:
                    self._pg = connect(self.path)
                conn = self._pg
                try:
                    cur = conn.cursor(row_factory=dict_row)
                    cur.execute(translate(sql), params or None)
                    return list(cur.fetchall()) if cur.description else []
                finally:
                    if not conn.closed:
                        conn.rollback()  # read only: nothing to keep, no idle transaction
            except psycopg.OperationalError as exc:
                self.close_unlocked()
                raise LedgerError(
                    f"query failed: {_first_line(exc)}", path=safe_url(self.path), kind="query"
                ) from None
            except psycopg.Error as exc:
                raise LedgerError(
                    f"query failed: {_first_line(exc)}", path=safe_url(self.path), kind="query"
                ) from None

    def close_unlocked(self) -> None:
        if self._pg is not None:
            try:  # noqa: SIM105
                self._pg.close()
            except Exception:
                pass
            self._pg = None

    def session_tool_totals(self, session_id: str) -> list[dict[str, Any]]:
        return self.query(
            "SELECT tool_name, count(*) FILTER (WHERE status <> 'denied') AS n, "
            "max(id) AS last_id FROM tool_calls WHERE session_id = ? GROUP BY tool_name",
            (session_id,),
        )

    def session_calls(self, session_id: str, after_id: int | None = None) -> list[dict[str, Any]]:
        sql = "SELECT id, tool_call_id, tool_name, status FROM tool_calls WHERE session_id = ?"
        if after_id is None:
            return self.query(sql + " ORDER BY id", (session_id,))
        return self.query(sql + " AND id > ? ORDER BY id", (session_id, after_id))

    def session_call_counts(self, session_id: str) -> list[dict[str, Any]]:
        return self.query(
            "select coalesce(agent_type, 'main') as agent, tool_name, status, count(*) as calls "
            "from tool_calls where session_id = :session group by 1, 2, 3 "
            "order by coalesce(agent_type, 'main') <> 'main', 1, 2, 3",
            {"session": session_id},
        )
