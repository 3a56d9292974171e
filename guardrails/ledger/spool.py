"""The JSONL spool: where records go while the ledger cannot be written.

Each line is one event's operations (``{"v": 1, "ops": [[name, params], ...]}``,
see :mod:`.records`), appended with one ``O_APPEND`` write so processes spooling at
once do not interleave. The line is ASCII (a lone surrogate is a ``\\udXXX`` escape).
``recover()`` (:meth:`Ledger.recover <guardrails.ledger.sqlite.Ledger.recover>`,
:mod:`.sqlite_recover`) imports them: it takes the spool (:func:`take`) inside its
write transaction and runs each record's operations on its own; :func:`reject` keeps
a line it could not import, with why, in ``<spool>.rejected`` (one JSON object a line:
``{"rejected_at", "reason", "record"}``), and :meth:`Taken.finish` removes what was
imported once it committed.

``v`` is the format: a release that changes an operation's parameters writes a new
``v`` and keeps importing the older ones, so a spool written because the file's schema
was newer than the writer (``newer_schema``) is imported by the newer hookrails. This
module only handles files and the import's one loop (:func:`import_records`, which every
engine's import and the journal's share); the store runs the statements.
"""

from __future__ import annotations

import json
import os
import time

from .._dataclass_free import LIST, record
from .common import logger
from .journal import _LOCK_EX, _LOCK_NB, FORMAT, line_of
from .journal import append_line as _append

try:
    from fcntl import flock as _flock
except ImportError:  # pragma: no cover - Windows: no flock; the window stays
    _flock = None  # type: ignore[assignment]

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable
    from dataclasses import Field
    from typing import IO, Any, ClassVar

    from .records import Op

    #: a spooled line, its operations (None: not a record) and why not
    Parsed = tuple[str, list[Op] | None, str]

__all__ = [
    "FORMAT",
    "RecoverReport",
    "Taken",
    "append",
    "import_records",
    "line_of",
    "parse",
    "reject",
    "spool_path",
    "spool_paths",
    "take",
    "waiting",
]


def spool_paths(path: str) -> list[str]:
    """Where a :class:`Ledger` for ``path`` (absolute) may have spooled records: beside
    the file, or in the temp folder when the file's folder could not be written. A
    PostgreSQL ledger (a URL) spools in the temp folder of the machine that wrote."""
    from .common import is_url

    if is_url(path):
        return [_temp_spool(path)]
    return [path + ".spool.jsonl", _temp_spool(path)]


def _temp_spool(path: str) -> str:
    import hashlib
    import tempfile

    from .common import is_url, safe_url

    if is_url(path):
        path = safe_url(path)  # the same ledger whatever the password
    tag = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return os.path.join(tempfile.gettempdir(), f"hookrails-spool-{tag}.jsonl")


def spool_path(path: str) -> str:
    """Where records for ``path`` go while it cannot be written: beside it, or in the
    temp folder when its folder cannot be written (or does not exist)."""
    beside = path + ".spool.jsonl"
    folder = os.path.dirname(path)
    from .common import is_url

    if not is_url(path) and (
        os.path.isdir(folder)
        and os.access(folder, os.W_OK | os.X_OK)
        and (not os.path.exists(beside) or os.access(beside, os.W_OK))
    ):
        return beside
    return _temp_spool(path)


def append(path: str, ops: list[Op], durable: bool = False) -> None:
    """Spool one record for the ledger at ``path`` (fsynced when ``durable``, as the
    ledger's commits are); when no spool can be written either, say so loudly (the Guard
    keeps guarding)."""
    data = line_of(ops)
    first = spool_path(path)
    error: OSError | str = "no spool location"
    for target in dict.fromkeys((first, _temp_spool(path))):
        try:  # one O_APPEND write per record: processes spooling at once do not interleave
            written = _append(target, data, fsync=durable)
        except OSError as exc:
            error = exc
            continue
        if written == len(data):
            return
        error = f"short write ({written} of {len(data)} bytes)"
    logger().error("hookrails ledger spool %s failed: %s; record lost", first, error)


def waiting(spool: str) -> bool:
    """Whether ``spool`` (or the ``.importing`` file of a recover that stopped) exists."""
    return os.path.exists(spool) or os.path.exists(spool + ".importing")


def take(spool: str, *, merge: bool = True) -> Taken:
    """The lines to import, once the caller holds the ledger's write lock; they stay this
    import's until :meth:`Taken.finish` (after its COMMIT) or :meth:`Taken.release`
    (rolled back).

    The spool is renamed to ``<spool>.importing``, so records spooled meanwhile start
    a new spool and two imports never take the same lines. The ``.importing`` file stays
    locked until its removal: an import that gets the write lock between another one's
    COMMIT and that removal finds it locked and takes nothing (it committed, or is giving
    it back: the next import takes what is left), instead of importing those lines again.
    One that an import which stopped before its COMMIT left (the lock died with it) is
    imported, with the spool appended to it (``merge``; without: that file only).
    """
    work = spool + ".importing"
    for path in (work, spool):
        if os.path.isdir(path):
            _set_aside(path)
    fh, busy = _left(work)
    if busy:
        return Taken(work, None)
    left = fh is not None
    try:
        if merge and os.path.exists(spool):
            if fh is not None:
                with open(spool, "rb") as src:
                    if _flock is not None:  # appends in flight end first; later ones start anew
                        _flock(src.fileno(), _LOCK_EX)
                    with open(work, "ab") as dst:
                        dst.write(b"\n" + src.read())  # a torn last line stays on its own line
                    os.remove(spool)
            else:
                os.replace(spool, work)
                fh = _locked(work)  # writers that opened the spool before the rename finish
        return Taken(work, fh, left)
    except BaseException:
        if fh is not None:
            fh.close()
        raise


def _set_aside(path: str) -> None:
    """A folder where a spool or journal file belongs (a stray ``mkdir``, a sync tool, a
    model hiding its calls from the ledger) was taken as an import takes a file, and every
    later import failed on it, so nothing appended since reached the file. It is moved
    aside, with a warning; the next append makes a file there again."""
    aside = f"{path}.not-a-file-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    try:
        os.replace(path, aside)
    except OSError as exc:
        logger().warning(
            "hookrails ledger: %s is a folder and cannot be moved (%s): remove it, or the "
            "records waiting there are not imported",
            path,
            exc,
        )
        return
    logger().warning("hookrails ledger: %s was a folder; moved aside to %s", path, aside)


def _left(work: str) -> tuple[IO[str] | None, bool]:
    """The ``.importing`` file an import left, opened and locked (None: there is none), and
    whether another import holds it instead (between its COMMIT and its removal, or giving
    it back). That import is waited for briefly (:data:`_LEFT_WAIT`: its removal is a few
    system calls after its COMMIT, and then this import takes what was journaled since, as
    every writer does before it writes), not longer: the caller holds the write lock."""
    try:
        fh = open(work, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115  # held
    except FileNotFoundError:
        return None, False
    if _flock is None:  # (Windows: no flock; the window stays)
        return fh, False
    try:
        if not _try_lock(fh.fileno(), _LEFT_WAIT):
            fh.close()
            return None, True
    except BaseException:
        fh.close()
        raise
    if os.fstat(fh.fileno()).st_nlink == 0:  # removed before we locked it: committed
        fh.close()
        return None, False
    return fh, False


def _locked(work: str) -> IO[str] | None:
    """The file this import just renamed to ``work``, opened and locked once the writers
    that opened it before the rename are done (at most :data:`_HELD_WAIT` seconds)."""
    fh = open(work, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115  # held
    if _flock is not None:
        try:
            _wait_for(fh.fileno(), work)
        except BaseException:
            fh.close()
            raise
    return fh


#: how long an import waits for the writers still appending to the spool it renamed (one
#: write each: longer means one stopped), before it fails and leaves the file for later
_HELD_WAIT = 10.0


#: how long an import waits for another one to remove the ``.importing`` file it committed
_LEFT_WAIT = 0.1


def _wait_for(fd: int, work: str) -> None:
    """Lock ``fd`` (of the file ``work``) exclusively, waiting at most :data:`_HELD_WAIT`
    seconds."""
    if not _try_lock(fd, _HELD_WAIT):
        raise OSError(
            f"a writer has held {work} for {_HELD_WAIT:g} s; it waits for the next import"
        )


def _try_lock(fd: int, wait: float) -> bool:
    """Lock ``fd`` exclusively within ``wait`` seconds: whether it was."""
    deadline = time.monotonic() + wait
    while True:
        try:
            _flock(fd, _LOCK_EX | _LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.001)


class Taken:
    """What :func:`take` took: its ``lines`` (none when nothing waited), and the lock on
    the file they came from (none without ``flock``: the file is closed at once, as an
    open file cannot be removed there)."""

    __slots__ = ("_fh", "held", "left", "lines", "work")

    def __init__(self, work: str, fh: IO[str] | None, left: bool = False) -> None:
        self.work = work
        #: whether anything was taken (a file was there)
        self.held = fh is not None
        #: it holds the file an import that stopped left: that one may have committed its
        #: lines (killed between its COMMIT and the removal), so each is looked up first
        self.left = left
        self.lines: list[str] = []
        if fh is not None:
            try:
                self.lines = fh.readlines()
            except BaseException:
                fh.close()
                raise
            if _flock is None:
                fh.close()
                fh = None
        self._fh = fh

    def parsed(self, known: Container[str]) -> list[Parsed]:
        """The lines that are not blank, each :func:`parse`'d: what an import runs."""
        out: list[Parsed] = []
        for line in self.lines:
            if line.strip():
                out.append((line, *parse(line, known)))
                if not len(out) % 8:  # let other threads in (a server's answers wait
                    time.sleep(0)  # otherwise for the whole batch's parse)
        return out

    def finish(self) -> None:
        """After the import committed: remove the imported file, then let the next
        import look."""
        if self.held:
            try:
                os.remove(self.work)
            finally:
                self.release()

    def release(self) -> None:
        """The import did not commit: the lines wait for the next import."""
        fh, self._fh = self._fh, None
        if fh is not None:
            fh.close()


def parse(line: str, known: Container[str]) -> tuple[list[Op] | None, str]:
    """One spooled record's operations, or None and why it is not one (torn by a crash or
    a full disk mid-write, another format, an operation this hookrails does not know)."""
    try:
        entry = json.loads(line)
    except ValueError as exc:
        return None, f"not JSON ({getattr(exc, 'msg', exc)}): torn by a crash or a full disk?"
    if not isinstance(entry, dict) or not isinstance(entry.get("ops"), list):
        return None, "not a spooled record (no ops)"
    version = entry.get("v")
    if not isinstance(version, int) or not 1 <= version <= FORMAT:
        return None, f"spool format {version!r}: this hookrails imports 1 to {FORMAT}"
    ops: list[Op] = []
    for op in entry["ops"]:
        if not (isinstance(op, list) and len(op) == 2 and isinstance(op[1], list)):
            return None, f"not an operation: {str(op)[:80]}"
        if op[0] not in known:
            return None, f"unknown operation {op[0]!r}"
        ops.append((op[0], op[1]))
    return ops, ""


def import_records(
    records: Iterable[Parsed],
    run: Callable[[list[Op]], None],
    refused: tuple[type[BaseException], ...],
) -> tuple[int, list[tuple[str, str]]]:
    """Run parsed records ``(line, ops or None, why not)`` with ``run`` (the store's: one
    record on its own savepoint, its strings made storable): ``(imported, [(line, why
    rejected)])``. One that is not a record, or that ``run`` refuses with one of the
    ``refused`` errors (the record's values: the store rolled its savepoint back), is
    rejected and the rest go on; any other error stops the import, whose transaction
    then rolls back and keeps the spool."""
    imported, rejected = 0, []
    for line, ops, why in records:
        if ops is None:
            rejected.append((line, why))
            continue
        try:
            run(ops)
        except refused as exc:
            names = ",".join(dict.fromkeys(name for name, _ in ops))
            rejected.append((line, f"{names}: {type(exc).__name__}: {exc}"))
        else:
            imported += 1
    return imported, rejected


def reject(spool: str, rejected: list[tuple[str, str]]) -> None:
    """Keep the ``(line, reason)`` pairs that could not be imported in
    ``<spool>.rejected``, instead of blocking every later record (before the import
    commits: what cannot be kept is not dropped either)."""
    if not rejected:
        return
    from .common import iso_time

    at = iso_time(time.time())
    with open(spool + ".rejected", "a", encoding="utf-8") as fh:
        for line, reason in rejected:
            entry = {"rejected_at": at, "reason": reason, "record": line.rstrip("\r\n")}
            fh.write(json.dumps(entry) + "\n")  # ASCII: any line, even bytes that are not UTF-8
    logger().warning(
        "hookrails ledger: %d spooled records in %s could not be imported; kept in %s (%s)",
        len(rejected),
        spool,
        spool + ".rejected",
        rejected[0][1] if len(rejected) == 1 else f"first: {rejected[0][1]}",
    )


@record()
class RecoverReport:
    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    imported: int
    interrupted: int
    spools: list[str]
    #: spooled records that could not be imported (kept in ``<spool>.rejected``)
    rejected: int

    def __init__(
        self,
        imported: int = 0,
        interrupted: int = 0,
        spools: list[str] = LIST,
        rejected: int = 0,
    ) -> None:
        self.imported = imported
        self.interrupted = interrupted
        self.spools = [] if spools is LIST else spools
        self.rejected = rejected
