"""The shipper: moves this machine's spooled records into the shared PostgreSQL ledger.

Records spool on a machine when the server cannot be reached (the ledger degrades) or when
a hook process decided without ``hookrails serve`` (:mod:`.postgres_spool`). ``serve``
runs a :class:`Shipper` beside its Guard: every ``interval`` seconds, when a spool for its
ledger's URL waits, it calls the ledger's ``recover`` (one transaction per spool, a record
the schema refuses set aside in ``<spool>.rejected``), so records reach the database
within about a second of it being reachable, and nothing waits for a person to run
``hookrails ledger recover``. While the server is down, each try costs one connection
attempt (``connect_timeout``).
"""

from __future__ import annotations

import threading

from ..errors import LedgerError
from .common import is_url, logger, safe_url
from .spool import spool_paths, waiting

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["DEFAULT_INTERVAL", "Shipper", "start_shipper"]

#: seconds between looks at the spool
DEFAULT_INTERVAL = 1.0


class Shipper:
    """A daemon thread that imports ``ledger``'s spool when one waits (see the module)."""

    def __init__(self, ledger: Any, interval: float = DEFAULT_INTERVAL) -> None:
        self.ledger = ledger
        self.interval = interval
        #: records imported so far, and the last failure (``None``: the last try went well)
        self.shipped = 0
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="hookrails-shipper", daemon=True)

    def start(self) -> Shipper:
        self._thread.start()
        return self

    def waiting(self) -> bool:
        return any(waiting(spool) for spool in spool_paths(self.ledger.path))

    def ship(self) -> int:
        """Import what waits now; records imported (0 when nothing waits or the server is
        still away: the spool stays for the next try)."""
        if not self.waiting():
            return 0
        try:
            report = self.ledger.recover()
        except (LedgerError, OSError) as exc:
            if self.error is None:
                logger().warning(
                    "hookrails: cannot ship the spool to %s yet (%s); trying every %gs",
                    safe_url(self.ledger.path),
                    exc,
                    self.interval,
                )
            self.error = str(exc)
            return 0
        except Exception as exc:  # a driver error mid-import: the spool is kept, try again
            self.error = f"{type(exc).__name__}: {exc}"
            logger().warning("hookrails: shipping the spool failed (%s); trying again", exc)
            return 0
        self.error = None
        self.shipped += report.imported
        if report.imported or report.rejected:
            logger().info(
                "hookrails: shipped %d spooled records to %s (%d set aside)",
                report.imported,
                safe_url(self.ledger.path),
                report.rejected,
            )
        return int(report.imported)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.ship()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop looking; a last look ships what waits (the ledger is still open)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self.ship()


def start_shipper(ledger: Any, interval: float = DEFAULT_INTERVAL) -> Shipper | None:
    """A running :class:`Shipper` for a PostgreSQL ledger; ``None`` for none or a file."""
    if ledger is None or not is_url(getattr(ledger, "path", None)):
        return None
    return Shipper(ledger, interval).start()
