"""The tool ledger: every call, decision and hook run, queryable with SQL.

``Ledger`` (:mod:`.sqlite`) is the SQLite store; :mod:`.store` is the interface a
store implements. :mod:`.records` turns a decision into rows, :mod:`.spool` keeps
them while the file cannot be written, :mod:`.migrations` holds the schema,
:mod:`.reader` the read side (``ctx.ledger``), :mod:`.query` and :mod:`.admin` what
``hookrails ledger`` computes. Every SQL statement of hookrails lives in this package.

A hook process opens a Ledger for every event, so names load on first use: importing
this package imports nothing else.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from .common import DEFAULT_LEDGER as DEFAULT_LEDGER
    from .common import process_alive as process_alive
    from .common import resolve_ledger_path as resolve_ledger_path
    from .migrations import schema_sql as schema_sql
    from .reader import LedgerReader as LedgerReader
    from .reader import connect_readonly as connect_readonly
    from .spool import RecoverReport as RecoverReport
    from .spool import spool_paths as spool_paths
    from .sqlite import Ledger as Ledger
    from .store import ClaimResult as ClaimResult
    from .store import KeyClaim as KeyClaim
    from .store import StoredKey as StoredKey
    from .store import judge as judge

#: each public name and the module of this package that defines it
_PUBLIC = {
    "DEFAULT_LEDGER": "common",
    "ClaimResult": "store",
    "KeyClaim": "store",
    "Ledger": "sqlite",
    "LedgerReader": "reader",
    "RecoverReport": "spool",
    "StoredKey": "store",
    "connect_readonly": "reader",
    "judge": "store",
    "process_alive": "common",
    "resolve_ledger_path": "common",
    "schema_sql": "migrations",
    "spool_paths": "spool",
}

__all__ = list(_PUBLIC)


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
