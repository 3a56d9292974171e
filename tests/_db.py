"""Reading a ledger file the way another process would: a connection of its own."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def rows(path: str | Path, sql: str, *params: Any) -> list[dict[str, Any]]:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def value(path: str | Path, sql: str, *params: Any) -> Any:
    found = rows(path, sql, *params)
    return next(iter(found[0].values())) if found else None
