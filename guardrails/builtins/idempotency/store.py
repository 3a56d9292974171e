"""Where ``idempotency_guard`` keeps its keys: the Guard's ledger, else its memory.

The ledger implements the key operations of :class:`~guardrails.ledger.store.Store`
(shared by every process on the file); :class:`MemoryKeys` implements the same ones
for a Guard without a ledger: one process only.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

from ...ledger.store import ClaimResult, StoredKey, judge

if TYPE_CHECKING:
    from ..._redaction import Redactor
    from ...ledger.store import KeyClaim, Store

__all__ = ["MemoryKeys", "key_store"]


class MemoryKeys:
    """Claims of one Guard without a ledger: this process only."""

    def __init__(self) -> None:
        self._rows: dict[str, StoredKey] = {}
        self._lock = threading.Lock()
        from ..._redaction import DEFAULT_REDACTOR

        self.redactor: Redactor = DEFAULT_REDACTOR

    def claim_key(self, c: KeyClaim) -> ClaimResult:
        with self._lock:
            row = self._rows.get(c.key)
            verdict = "reclaim" if row is None else judge(row, c)
            if verdict == "reclaim":
                self._rows[c.key] = StoredKey(
                    "in_progress",
                    c.payload_hash,
                    c.tool_call_id,
                    c.session_id,
                    None,
                    c.now,
                    c.expires,
                    c.tool_input,
                )
                return ClaimResult("claimed")
            return ClaimResult(verdict, row)

    def complete_key(
        self, key: str, tool_call_id: str | None, result: str, now: float, *, exact: bool
    ) -> None:
        self._finish(key, tool_call_id, "completed", result)

    def fail_key(
        self, key: str, tool_call_id: str | None, error: str, now: float, *, exact: bool
    ) -> None:
        self._finish(key, tool_call_id, "failed", error)

    def _finish(self, key: str, call_id: str | None, state: str, result: str) -> None:
        with self._lock:
            row = self._rows.get(key)
            if row is not None and row.state == "in_progress" and row.tool_call_id == call_id:
                row.state = state
                row.result = result


_memory: weakref.WeakKeyDictionary[Any, MemoryKeys] = weakref.WeakKeyDictionary()
_memory_lock = threading.Lock()


def key_store(ctx: Any) -> Store | MemoryKeys:
    """The Guard's ledger, else the Guard's own :class:`MemoryKeys`."""
    guard = ctx.guard
    ledger = guard.ledger
    if ledger is not None:
        return ledger  # type: ignore[no-any-return]
    store = _memory.get(guard)
    if store is None:
        with _memory_lock:
            store = _memory.get(guard)
            if store is None:
                store = _memory[guard] = MemoryKeys()
    return store
