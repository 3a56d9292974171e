"""What every part of the ledger shares: where the file is, the time format, error kinds,
whether a process still runs, and the logger.

A hook process that records imports this (through :mod:`.sqlite`), so it imports only
what recording needs; ``logging`` loads when something is logged.
"""

from __future__ import annotations

import os
import sys
import time

from ..errors import LedgerError

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    import logging

    from ..definition.model import AgentDefinition
    from .sqlite import Ledger

__all__ = [
    "DEFAULT_LEDGER",
    "ENV_VAR",
    "check_definition_ledger",
    "definition_ledger",
    "error_kind",
    "escape_surrogates",
    "is_url",
    "iso_time",
    "logger",
    "open_failure_kind",
    "postgres_ledger_class",
    "process_alive",
    "resolve_ledger_path",
    "safe_url",
    "same_file",
]

DEFAULT_LEDGER = os.path.join(".hookrails", "ledger.db")
ENV_VAR = "HOOKRAILS_LEDGER"


#: what a PostgreSQL ledger's location starts with (a libpq URL)
URL_SCHEMES = ("postgresql://", "postgres://")


def is_url(path: object) -> bool:
    """Whether a ledger location is a PostgreSQL URL (else it is a SQLite file)."""
    return type(path) is str and path.startswith(URL_SCHEMES)


def safe_url(url: str) -> str:
    """``url`` with its password masked, for messages and logs."""
    import re

    return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)


def resolve_ledger_path(
    path: str | os.PathLike[str] | None = None, definition: AgentDefinition | None = None
) -> str:
    """Explicit path, else ``$HOOKRAILS_LEDGER``, else the definition's ``ledger:``
    (relative to its file), else ``.hookrails/ledger.db`` under the working directory.
    A ``postgresql://`` URL (anywhere in that order) is kept as it is."""
    if path is not None:
        if is_url(path):
            return str(path)
        return os.path.abspath(os.fspath(path))
    env = os.environ.get(ENV_VAR)
    if env:
        return env if is_url(env) else os.path.abspath(env)
    named = definition_ledger(definition)
    return named if named is not None else os.path.abspath(DEFAULT_LEDGER)


def definition_ledger(definition: AgentDefinition | None) -> str | None:
    """The file the definition's ``ledger:`` key names (relative to the definition's
    file), or ``None`` when it has none."""
    if definition is None or not definition.ledger:
        return None
    if is_url(definition.ledger):
        return definition.ledger
    base = os.path.dirname(os.path.abspath(definition.source)) if definition.source else ""
    return os.path.abspath(os.path.join(base, definition.ledger))


def check_definition_ledger(path: str, definition: AgentDefinition) -> None:
    """Raise :class:`~guardrails.DefinitionError` (at the ``ledger:`` key, naming both
    files) when ``path`` is not the file the definition's ``ledger:`` key names: records
    would go where ``hookrails ledger --config`` does not look. No key, or a
    ``$HOOKRAILS_LEDGER`` (which outranks the key everywhere), is no conflict."""
    named = definition_ledger(definition)
    if named is None or os.environ.get(ENV_VAR) or same_file(named, path):
        return
    from ..errors import DefinitionError

    raise DefinitionError(
        f"the definition records into {named}, but the Guard was given Ledger({path!r}): "
        "`hookrails ledger --config` would not find its records; pass Ledger() or "
        "ledger=True to record into the definition's file, or ledger=PATH (or "
        "Ledger(PATH, definition=...)) to record elsewhere on purpose",
        file=definition.source,
        loc=("ledger",),
    ).within(lines=getattr(definition, "locations", None))


def same_file(one: str, two: str) -> bool:
    """Whether two paths name one file (symbolic links and case folding as the OS has them);
    two URLs are the same ledger when they are the same text."""
    if is_url(one) or is_url(two):
        return one == two
    return os.path.normcase(os.path.realpath(one)) == os.path.normcase(os.path.realpath(two))


def logger() -> logging.Logger:
    """The ``guardrails.ledger`` logger, imported when first needed (``logging`` costs a
    hook process ~4 ms)."""
    import logging

    return logging.getLogger("guardrails.ledger")


#: the last second :func:`iso_time` formatted and its text (calls come many a second);
#: one tuple, replaced whole, so threads always read a matching pair
_last_second: tuple[int, str] = (-1, "")


def iso_time(t: float) -> str:
    """UTC ISO-8601 with milliseconds, the ledger's time format (sorts as text)."""
    global _last_second
    ms = int(t * 1000)
    second = ms // 1000
    cached = _last_second
    if cached[0] == second:
        text = cached[1]
    else:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _last_second = (second, text)
    return f"{text}.{ms % 1000:03d}Z"


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine still runs (a zombie does not)."""
    if sys.platform == "win32":  # os.kill(pid, 0) would send CTRL_C_EVENT there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # Linux: a killed child nobody has reaped yet is still "there" for kill()
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] != b"Z"


def open_failure_kind(exc: BaseException, folder: str) -> str:
    """:func:`error_kind` of a file that could not be opened in ``folder``."""
    kind = error_kind(exc)
    if kind == "error" and not os.access(folder, os.W_OK):
        return "read_only"  # "unable to open database file": no file, -wal or -shm here
    return kind


def error_kind(exc: BaseException) -> str:
    """The :class:`~guardrails.LedgerError` kind an exception means: ``read_only``,
    ``full``, ``corrupt``, ``locked`` or ``error``."""
    if isinstance(exc, LedgerError):
        return exc.kind
    if isinstance(exc, OSError) and exc.errno is not None:
        import errno  # here: a failure's path, not a hook process's every one

        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return "full"
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EEXIST):
            return "read_only"  # the folder cannot be created or written
    text = str(exc).lower()
    if "readonly" in text or "read-only" in text or "permission denied" in text:
        return "read_only"
    if "full" in text:
        return "full"
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return "corrupt"
    if "locked" in text or "busy" in text:
        return "locked"
    return "error"


def escape_surrogates(text: str) -> str:
    """``text`` with each lone UTF-16 surrogate (``"\\ud800"``, which ``JSON.stringify``
    and ``json.loads`` produce, UTF-8 cannot hold and SQLite refuses to bind) written as
    its six-character JSON escape ``\\ud800``. Inside JSON text that is the same string
    (``json.loads`` reads it back, ``json_extract`` reads it); in plain text it is a
    readable stand-in. Text without one comes back as it is, at the cost of a scan."""
    if text.isascii():
        return text
    import re

    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)


def postgres_ledger_class() -> type[Ledger]:
    """:class:`~guardrails.ledger.postgres.PostgresLedger`, imported when a URL asks for it
    (psycopg costs a process hundreds of milliseconds; a SQLite ledger never loads it)."""
    try:
        from .postgres import PostgresLedger
    except ImportError as exc:
        raise LedgerError(
            f"a postgresql:// ledger needs the postgres extra ({exc}): "
            "pip install 'hookrails[postgres]'",
            kind="missing_driver",
        ) from None
    return PostgresLedger
