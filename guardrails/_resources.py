"""Find the ``schemas/`` and ``ledger/`` data folders.

A wheel ships them as ``guardrails/_data/<name>``; an editable install or a
checkout reads them from the repository root next to ``guardrails/`` (a folder
holding ``pyproject.toml``, so an installed package never picks up an unrelated
``site-packages/schemas``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["data_path"]

_HERE = Path(__file__).resolve().parent


def data_path(name: str) -> Path:
    """The folder ``name`` (``schemas`` or ``ledger``) for this installation."""
    packaged = _HERE / "_data" / name
    if packaged.is_dir():
        return packaged
    checkout = _HERE.parent / name
    if checkout.is_dir() and (_HERE.parent / "pyproject.toml").is_file():
        return checkout
    raise FileNotFoundError(
        f"hookrails data folder {name!r} is missing from this installation "
        f"(looked in {packaged} and {checkout})"
    )
