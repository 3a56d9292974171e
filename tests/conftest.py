"""Fixtures every test can ask for, and an environment a developer's shell cannot change.

* ``ledger_path``: a fresh ledger file name (``str``, like ``Ledger.path``), nothing created;
* ``filled_ledger``: a closed ledger a real Guard wrote (see :func:`tests._guards.fill_ledger`);
* ``make_guard``: :func:`tests._guards.build_guard`, closing the ledgers of the Guards it made.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guardrails import Guard
from tests._guards import GuardFactory, build_guard, fill_ledger

#: variables the library reads besides ``HOOKRAILS_*`` (ledger, cache, token): Claude Code's
#: project and config folders, and the cache's base folder
LIBRARY_ENV = ("CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR", "XDG_CACHE_HOME")


@pytest.fixture(autouse=True, scope="session")
def clean_env() -> Iterator[None]:
    """No ``HOOKRAILS_*`` (nor :data:`LIBRARY_ENV`) variable from the shell reaches a test.

    Session-wide, so module and session fixtures (hook processes, servers) see the clean
    environment too; a test that sets one uses ``monkeypatch``, which undoes it."""
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith("HOOKRAILS_") or name in LIBRARY_ENV:
                patch.delenv(name)
        yield


@pytest.fixture
def ledger_path(tmp_path: Path) -> str:
    return str(tmp_path / "ledger.db")


@pytest.fixture
def filled_ledger(ledger_path: str) -> str:
    fill_ledger(ledger_path)
    return ledger_path


@pytest.fixture
def make_guard() -> Iterator[GuardFactory]:
    made: list[Guard] = []

    def make(*args: Any, **kwargs: Any) -> Guard:
        guard = build_guard(*args, **kwargs)
        made.append(guard)
        return guard

    yield make
    for guard in made:
        if guard.ledger is not None:
            guard.ledger.close()
