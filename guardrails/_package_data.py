"""Find the ``schemas/`` data folder (the ledger SQL lives in ``guardrails/ledger/sql``).

A wheel ships them as ``guardrails/_data/<name>``; an editable install or a
checkout reads them from the repository root next to ``guardrails/`` (a folder
holding ``pyproject.toml``, so an installed package never picks up an unrelated
``site-packages/schemas``).

:func:`data_dir` answers with ``os.path`` alone: a hook process opening the
ledger asks on every event, and ``pathlib`` would cost it about 3 ms.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["data_dir", "data_path"]

_HERE = os.path.dirname(os.path.realpath(__file__))


def data_dir(name: str) -> str:
    """The folder ``name`` (``schemas`` or ``ledger``) for this installation."""
    packaged = os.path.join(_HERE, "_data", name)
    if os.path.isdir(packaged):
        return packaged
    root = os.path.dirname(_HERE)
    checkout = os.path.join(root, name)
    if os.path.isdir(checkout) and os.path.isfile(os.path.join(root, "pyproject.toml")):
        return checkout
    raise FileNotFoundError(
        f"hookrails data folder {name!r} is missing from this installation "
        f"(looked in {packaged} and {checkout})"
    )


def data_path(name: str) -> Path:
    """:func:`data_dir` as a :class:`~pathlib.Path`."""
    from pathlib import Path

    return Path(data_dir(name))
