"""The red-team corpora of the shell guards, the benign corpora, and the harness that runs them.

``ALL`` is every evasion (``cases.Evasion``), ``BENIGN`` the benign corpus guard
authors may look at, ``BENIGN_INDEPENDENT`` the one they should not tune against.
``make redteam`` (``benchmarks/redteam.py``) prints the numbers;
``tests/unit/builtins/shell/test_redteam.py`` holds the guards to them.
"""

from __future__ import annotations

from . import evasions_delete, evasions_download, evasions_exfil, evasions_paths
from .cases import Evasion, check_corpus

__all__ = ["ALL", "by_category"]

ALL: list[Evasion] = [
    *evasions_delete.CASES,
    *evasions_download.CASES,
    *evasions_paths.CASES,
    *evasions_exfil.CASES,
]
check_corpus(ALL)


def by_category() -> dict[str, list[Evasion]]:
    """The evasions grouped by category, in corpus order."""
    out: dict[str, list[Evasion]] = {}
    for case in ALL:
        out.setdefault(case.category, []).append(case)
    return out
