"""Fixtures every test can ask for, and an environment a developer's shell cannot change.

* ``ledger_path``: a fresh ledger file name (``str``, like ``Ledger.path``), nothing created;
* ``filled_ledger``: a closed ledger a real Guard wrote (see :func:`tests._guards.fill_ledger`);
* ``make_guard``: :func:`tests._guards.build_guard`, closing the ledgers of the Guards it made;
* ``postgres``: a throwaway PostgreSQL cluster for the whole run (:mod:`tests._postgres`),
  started on first use and stopped at the end (a finalizer, and ``atexit``); skipped with one
  loud line naming the package when this machine has no server binaries (CI's machines
  have them, so there these tests run);
* ``ledger_url``: a fresh ledger on each engine (``sqlite``: a file name, ``postgres``: a URL
  of a new database): the suites that must hold on both take this one fixture.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guardrails import Guard
from tests import _postgres
from tests._guards import GuardFactory, build_guard, fill_ledger


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test on the PostgreSQL server is ``slow``: it needs another process (the cluster),
    so ``make test-fast`` leaves it to ``make test``, which runs every test."""
    slow = pytest.mark.slow
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if (
            "postgres" in getattr(item, "fixturenames", ())
            or "postgres_url" in getattr(item, "fixturenames", ())
            or "postgres" in params.values()
        ):
            item.add_marker(slow)


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


_databases = iter(range(1, 1_000_000))


@pytest.fixture(scope="session")
def postgres(request: pytest.FixtureRequest) -> _postgres.Cluster:
    """A PostgreSQL cluster of its own for this test run (see :mod:`tests._postgres`)."""
    if _postgres.binaries() is None:
        message = (
            f"PostgreSQL tests SKIPPED: no PostgreSQL >= {_postgres.MIN_VERSION} server binaries "
            f"in /usr/lib/postgresql/*/bin; install the `{_postgres.PACKAGE}` package "
            f"(apt-get install {_postgres.PACKAGE}) to run them"
        )
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(message, yellow=True, bold=True)
        pytest.skip(message)
    cluster = _postgres.start()
    request.addfinalizer(cluster.stop)
    return cluster


@pytest.fixture
def postgres_url(postgres: _postgres.Cluster) -> str:
    """A URL of a new, empty ledger in the test cluster (a schema and a user of its own)."""
    return postgres.create_schema(f"ledger_{os.getpid()}_{next(_databases)}")


@pytest.fixture(params=["sqlite", "postgres"])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh ledger location on each engine: a file name, or a new database's URL."""
    if request.param == "sqlite":
        return str(tmp_path / "ledger.db")
    return str(request.getfixturevalue("postgres_url"))
