"""A throwaway PostgreSQL cluster for the benchmarks: the tests' own (``tests/_postgres.py``).

That module is test code, not something users need (it runs ``initdb`` with trust
authentication and ``fsync=off``), so it stays in ``tests/`` and the benchmarks import it
from the repository root. :func:`cluster` yields ``None`` with the reason when there are
no server binaries, and each PostgreSQL section then says so in one line.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests import _postgres  # noqa: E402

_databases = iter(range(1, 1_000_000))


@contextmanager
def cluster() -> Iterator[tuple[Any, str]]:
    """``(cluster, "")`` for a started cluster (stopped after), else ``(None, why)``."""
    if _postgres.binaries() is None:
        yield (
            None,
            (
                f"no PostgreSQL >= {_postgres.MIN_VERSION} server binaries "
                f"(apt-get install {_postgres.PACKAGE}): section skipped"
            ),
        )
        return
    try:
        import psycopg  # noqa: F401
    except ImportError:
        yield None, "psycopg is not installed (pip install 'hookrails[postgres]'): section skipped"
        return
    try:
        started = _postgres.start()
    except RuntimeError as exc:
        yield None, f"the cluster did not start ({str(exc).splitlines()[0]}): section skipped"
        return
    try:
        yield started, ""
    finally:
        started.stop()


def database(started: Any) -> str:
    """A new, empty database's URL on the started cluster."""
    return str(started.create_database(f"bench_{next(_databases)}"))
