"""Find the ``schemas/`` and ``ledger/`` data folders.

A wheel ships them as ``guardrails/_data/<name>``; an editable install or a
checkout reads them from the repository root next to ``guardrails/``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["data_path"]

_HERE = Path(__file__).resolve().parent


def data_path(name: str) -> Path:
    """The folder ``name`` (``schemas`` or ``ledger``) for this installation."""
    for candidate in (_HERE / "_data" / name, _HERE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"hookrails data folder {name!r} is missing from this installation "
        f"(looked in {_HERE / '_data'} and {_HERE.parent})"
    )
