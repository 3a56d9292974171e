"""The journal: how a ``hookrails hook`` process records an event without opening SQLite.

A command hook is one process per event. Opening the ledger costs it more than deciding
(importing ``sqlite3``, connecting, the pragmas, the transaction: ~9 ms of a ~40 ms
process), so :class:`JournalLedger` appends the event's rows (the named operations of
:mod:`.records`, the spool's line format) to ``<ledger>.journal.jsonl`` with one
``O_APPEND`` write, before the hook answers: a written line survives the process's exit,
as a ``synchronous=NORMAL`` commit does (``durable``: it is fsynced). The next process
that opens the file imports what waits there, in order, before it writes or reads
(:mod:`.journal_import`): every SQLite :class:`~.sqlite.Ledger` write, its
``session_state`` and reader queries, ``recover`` and the ``hookrails ledger`` commands.

Only an event that needs nothing from the session's state goes to the journal (the
state is settled in the store's write transaction, docs/design.md §7): no new turn, no
context to inject, no halt, not an AgentStop let through. A PreToolUse that would run
(the halt gate) is journaled only when its session cannot be halted: a halt is written
with a marker file (``<ledger>.halted/<digest>``, :func:`mark_halted`) made inside its
transaction, under an exclusive lock that a journaled gate holds shared from its
look at the marker to its append, so a call journaled after a halt committed is never
allowed. Everything else (and every event once this process opened the store) takes the
store, which imports the journal first.

This module is on the hook path: ``os`` and the records module only.
"""

from __future__ import annotations

import json
import os
import time

from .common import escape_surrogates
from .records import EventRows

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from .._redaction import Redactor
    from ..definition.model import AgentDefinition
    from ..results import Decision
    from .records import Op
    from .session_state import SessionState, Settled, StateChange
    from .sqlite import Ledger

__all__ = [
    "JournalLedger",
    "append",
    "halts_folder",
    "journal_path",
    "mark_halted",
    "waiting",
]

#: the byte caps of :class:`~.sqlite.Ledger` (``DEFAULT_MAX_OUTPUT``, ``DEFAULT_MAX_ARGUMENTS``);
#: not imported from there: that module imports ``sqlite3``
_CAP = 64 * 1024
_LOCK_SH, _LOCK_EX, _LOCK_NB = 1, 2, 4  # fcntl.LOCK_SH, fcntl.LOCK_EX, fcntl.LOCK_NB
#: the spool format this hookrails writes (``spool.FORMAT``), and the newest it imports
FORMAT = 1


def journal_path(path: str) -> str:
    """The journal of the ledger file ``path``."""
    return path + ".journal.jsonl"


def halts_folder(path: str) -> str:
    """Where the halt markers of the ledger file ``path`` live. It exists once a writer
    marked every session halted in the file (:func:`.journal_import.seed_halts`): until
    then no gate is journaled."""
    return path + ".halted"


def _marker(path: str, session_id: str, agent: str) -> str:
    from .._canonical_json import _sha256_hex  # not hashlib: it costs a hook process 2.7 ms

    # keyed as the file keeps them (a lone surrogate as its escape), so a marker made
    # from the file's rows (seed_halts) is the one an event's own id looks for
    key = f"{escape_surrogates(session_id)}\0{escape_surrogates(agent)}".encode()
    return os.path.join(halts_folder(path), _sha256_hex(key)[:32])


def waiting(path: str) -> bool:
    """Whether journaled records wait for an import (or an import that stopped left some)."""
    work = journal_path(path)
    return os.path.exists(work) or os.path.exists(work + ".importing")


class Poll:
    """:func:`waiting`, asked at most once per :data:`_POLL_SECONDS`: a long-lived writer's
    look before each write (two ``stat`` calls) cost more than some of the write's own
    work. Journaled events need nothing from the session's state and change none, so one
    imported a millisecond later than it could have been decides nothing differently."""

    __slots__ = ("due", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self.due = 0.0

    def __call__(self) -> bool:
        now = time.monotonic()
        if now < self.due:
            return False
        self.due = now + _POLL_SECONDS
        return waiting(self.path)


#: how often a writer looks for a journal before its writes
_POLL_SECONDS = 0.001


def _lock(path: str, how: int) -> int:
    """The halt lock of the ledger ``path`` (``<ledger>.journal.lock``), taken; an fd to close."""
    fd = os.open(path + ".journal.lock", os.O_RDWR | os.O_CREAT, 0o600)
    if _flock is not None:
        try:
            _flock(fd, how)
        except OSError:
            os.close(fd)
            raise
    return fd


try:
    from fcntl import flock as _flock
except ImportError:  # pragma: no cover - Windows: no flock; gates then take the store
    _flock = None  # type: ignore[assignment]


def line_of(ops: list[Op]) -> bytes:
    """One record's line, as the spool (:mod:`.spool`) and the journal hold it. It starts
    with a newline too: a line cut short before it (a full disk, a crash mid-write) stays a
    line of its own, rejected alone, instead of swallowing this one (blank lines are
    skipped)."""
    line = "\n" + json.dumps({"v": FORMAT, "ops": [[n, p] for n, p in ops]}, default=str) + "\n"
    return line.encode("utf-8", "surrogateescape")


def append_line(target: str, data: bytes, *, fsync: bool = False) -> int:
    """Write ``data`` at the end of the file at ``target`` under a shared lock, into the file
    that is at ``target`` once locked: an import (:func:`.spool.take`) renames the file and
    then takes the lock exclusively, so a record is either in what it reads or in the next
    file, never written into one it already read. Here, not in :mod:`.spool`, so a hook
    process that journals does not import that module."""
    for _ in range(100):
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            if _flock is not None and not _share(fd, target):
                continue  # taken meanwhile: append to the file now at the path
            # asked before writing: with two writers at a new file, the first to write saw
            # it empty (after, each may see the other's line too and neither sync the name)
            fresh = fsync and os.fstat(fd).st_size == 0
            written = os.write(fd, data)
            if fsync:
                os.fsync(fd)
                if fresh:  # this line made the file: its name too
                    _sync_folder(target)
            return written
        finally:
            os.close(fd)
    raise OSError(f"{target} kept being taken while appending")


def _sync_folder(target: str) -> None:
    """fsync the folder holding ``target``, so a file just made survives a power cut with
    its name (SQLite does the same for a WAL it creates at ``synchronous=FULL``). Where a
    folder cannot be synced (some filesystems, Windows) it is skipped, as SQLite skips it."""
    try:
        fd = os.open(os.path.dirname(target) or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _share(fd: int, target: str) -> bool:
    """Lock ``fd`` shared, unless the file at ``target`` is not its file any more (an import
    took it: False). An import holds the file it took exclusively until it removed it: a
    writer that opened it just before does not wait for that, it sees it moved."""
    waited = 0
    while True:
        try:
            _flock(fd, _LOCK_SH | _LOCK_NB)
        except BlockingIOError:
            if _moved(fd, target):
                return False
            waited += 1  # an import merging this file into its own: one read
            if waited > 20_000:
                raise OSError(f"{target} stayed locked while appending") from None
            time.sleep(0.0005)
            continue
        return not _moved(fd, target)


def _moved(fd: int, target: str) -> bool:
    try:
        return os.fstat(fd).st_ino != os.stat(target).st_ino
    except FileNotFoundError:
        return True


def append(path: str, ops: list[Op], durable: bool = False) -> bool:
    """Journal one event's rows for the ledger ``path``: one ``O_APPEND`` write of one
    line (the spool's format), fsynced when ``durable``. False when it could not be
    written whole (the caller takes the store)."""
    data = line_of(ops)
    try:
        written = append_line(journal_path(path), data, fsync=durable)
    except OSError:
        return False
    return written == len(data)


def append_gate(path: str, session_id: str, agent: str, ops: list[Op], durable: bool) -> bool:
    """Journal a PreToolUse that would run, unless its session may be halted: the halt
    lock is held shared from the look at its marker to the append, so a halt committed
    before the append has its marker seen (:func:`mark_halted`). False: take the store."""
    if _flock is None or not os.path.isdir(halts_folder(path)):
        return False
    try:
        fd = _lock(path, _LOCK_SH)
    except OSError:
        return False
    try:
        if may_be_halted(path, session_id, agent):
            return False
        return append(path, ops, durable)
    finally:
        os.close(fd)


def may_be_halted(path: str, session_id: str, agent: str) -> bool:
    """Whether the session's halt marker is there, or cannot be looked at (a folder this
    process may not read): only a marker surely absent lets a gate skip the store."""
    try:
        os.stat(_marker(path, session_id, agent))
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


def mark_halted(path: str, session_id: str, agent: str) -> None:
    """Inside the write transaction that records a halt of ``session_id``, before it
    commits: its marker, under the exclusive halt lock, so no gate of the session is
    journaled from here on. Nothing while the markers folder does not exist (no gate is
    journaled then, and :func:`.journal_import.seed_halts`, under the write lock too,
    marks the halts committed by then). Markers stay: a later event of the session takes
    the store, which knows whether the halt is over. Raises ``OSError``."""
    if not os.path.isdir(halts_folder(path)):
        return
    fd = _lock(path, _LOCK_EX)
    try:
        os.close(os.open(_marker(path, session_id, agent), os.O_WRONLY | os.O_CREAT, 0o600))
    finally:
        os.close(fd)


def _journals(change: StateChange | None) -> int:
    """0: the event needs the store; 1: it can be journaled; 2: it can, unless halted."""
    if change is None or not change.active:
        return 1
    if (
        change.gate
        and not (change.new_turn or change.inject or change.end_turn)
        and (change.halt is None)
    ):
        return 2
    return 0


class JournalLedger:
    """``hookrails hook``'s ledger for a SQLite file: events that need no session state
    are journaled; anything else opens the file (a :class:`~.sqlite.Ledger`, which imports
    the journal first) and is delegated to it, as are the claims, reads and ``close``."""

    def __init__(
        self,
        location: str | None,
        *,
        definition: AgentDefinition | None = None,
        durable: bool = False,
    ) -> None:
        from .._redaction import Redactor
        from .common import resolve_ledger_path

        self.path = resolve_ledger_path(location, definition)
        self._location = location
        self._definition = definition
        self.durable = durable
        self._rows = EventRows(Redactor(()), _CAP, _CAP)
        self._store: Ledger | None = None
        #: events journaled by this process (for tests and the bench)
        self.journaled = 0

    def __repr__(self) -> str:
        return f"JournalLedger({self.path!r})"

    def store(self) -> Ledger:
        """The file itself, opened on first need (the journal imported first)."""
        if self._store is None:
            from .sqlite import Ledger

            self._store = Ledger(self._location, definition=self._definition, durable=self.durable)
        return self._store

    def __getattr__(self, name: str) -> Any:  # claims, write_transaction, recover, ...
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.store(), name)

    @property
    def degraded(self) -> str | None:
        return None if self._store is None else self._store.degraded

    @property
    def redactor(self) -> Redactor:
        return self._rows.redactor

    @property
    def reader(self) -> Any:
        """``ctx.ledger``: the store's reader, opened when a hook first reads."""
        return _LazyReader(self)

    def record(
        self,
        decision: Decision,
        now: float,
        *,
        agent: str,
        tenant: str | None,
        owner_pid: int | None = None,
        change: StateChange | None = None,
    ) -> Settled | None:
        """Journal the event when it needs no session state (see the module), else record
        it in the store; the store's outcome, or ``JOURNALED`` (nothing settled)."""
        if self._store is None:
            how = _journals(change)
            if how:
                ops = self._rows.ops(decision, now, agent=agent, tenant=tenant, owner_pid=owner_pid)
                if how == 1:
                    done = append(self.path, ops, self.durable)
                else:
                    sid = decision.event.session_id
                    done = append_gate(self.path, sid, agent, ops, self.durable)
                if done:
                    self.journaled += 1
                    from .session_state import JOURNALED  # loaded with the Guard already

                    return JOURNALED
        return self.store().record(
            decision, now, agent=agent, tenant=tenant, owner_pid=owner_pid, change=change
        )

    def session_state(self, session_id: str, agent: str) -> SessionState | None:
        """Before a PreToolUse's hooks: the store's answer when the session may be halted
        (its marker, or no markers kept yet) or the store is open; otherwise ``None``, as
        for a session with nothing that gates it. The budget already used is settled by
        the store when the event injects (such an event is never journaled)."""
        path = self.path
        if (
            self._store is None
            and os.path.isdir(halts_folder(path))
            and not may_be_halted(path, session_id, agent)
        ):
            return None
        return self.store().session_state(session_id, agent)

    def close(self, *, checkpoint: bool = True) -> None:
        if self._store is not None:
            self._store.close(checkpoint=checkpoint)

    def __enter__(self) -> JournalLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _LazyReader:
    """A :class:`~.reader.LedgerReader` opened on its first query (``sqlite3`` with it):
    a hook process whose hooks read nothing never pays for it."""

    __slots__ = ("_ledger",)

    def __init__(self, ledger: JournalLedger) -> None:
        self._ledger = ledger

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ledger.store().reader, name)
