"""A PostgreSQL ledger that never connects: a hook process's, when no ``serve`` relays.

``hookrails hook`` must not open a PostgreSQL connection (importing psycopg alone costs
~0.2 s). When this machine's ``hookrails serve`` cannot take an event
(:mod:`guardrails.claude_code.relay`), the hook decides in its own process with this
ledger: every record goes to the machine's spool for the URL (the one
:class:`~.postgres.PostgresLedger` spools to during an outage), which ``serve``'s
:class:`~.postgres_ship.Shipper` or ``hookrails ledger recover`` imports; what must be
answered by the shared database before a call runs (an idempotency claim, the session's
state) raises :class:`~guardrails.LedgerError`, so a claim fails closed with the reason
and the session's state stays this process's view (docs/design.md §7).
"""

from __future__ import annotations

from ..errors import LedgerError
from .common import safe_url
from .postgres import PostgresLedger

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from .records import Op

    T = TypeVar("T")

__all__ = ["SpoolOnlyLedger"]

#: why a spool-only ledger records nothing in the database (its ``degraded``)
REASON = "relay: no hookrails serve took this event, so this process spools"


class SpoolOnlyLedger(PostgresLedger):
    """Records spool on this machine; claims and state reads raise ``LedgerError``."""

    def _open(self) -> None:
        self._unbound = False
        self._pool = None
        self._degraded = REASON
        self._kind = "relay"
        self._reopen_at = float("inf")  # never: a hook process does not connect

    def _write(self, ops: list[Op], settle: Any = None) -> bool:
        from .spool import append

        append(self.path, ops if settle is None else settle.ops)
        return False

    def _run(self, fn: Callable[[Any], T]) -> T:
        raise LedgerError(
            "the shared ledger cannot be asked from this hook process (no hookrails serve "
            "took the event)",
            path=safe_url(self.path),
            kind="degraded",
        )

    def recover(self, *, older_than: float | None = None, now: float | None = None) -> Any:
        with PostgresLedger(self.path) as ledger:  # its pool closed after
            return ledger.recover(older_than=older_than, now=now)
