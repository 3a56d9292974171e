"""Canonical JSON and hashes of tool inputs: the same input always hashes the same.

Sorted keys, no spaces, UTF-8 (non-ASCII kept as is), NaN and infinities
rejected, non-JSON values rejected: ``repeated_calls`` and idempotency keys
depend on two equal inputs producing byte-identical text.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["canonical_json", "input_hash"]


def canonical_json(value: Any) -> str:
    """Raise ``ValueError`` (NaN/infinity) or ``TypeError`` (non-JSON value)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def input_hash(value: Any) -> str:
    """sha256 hex of the canonical JSON; values JSON cannot hold hash by their ``repr``."""
    try:
        text = canonical_json(value)
    except (TypeError, ValueError):
        text = "repr:" + repr(value)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
