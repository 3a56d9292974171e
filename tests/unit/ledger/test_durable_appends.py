"""``durable=True`` reaches the lines a ledger appends beside its file: a journaled or
spooled record is fsynced before it counts as written, and the file's folder too when
the line made the file (its name would not survive a power cut otherwise), as SQLite
syncs the folder of a WAL it creates at ``synchronous=FULL``."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from guardrails import AgentDefinition, Guard
from guardrails.ledger import journal, spool
from guardrails.ledger.migrations import latest_version
from guardrails.ledger.sqlite import Ledger
from tests.unit.ledger.conftest import bash_call

OPS = [("sessions", {"session_id": "s1"})]


def _synced(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """What ``os.fsync`` is called on from now: ("dir" or "file", inode)."""
    seen: list[tuple[str, int]] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        seen.append(("dir" if stat.S_ISDIR(st.st_mode) else "file", st.st_ino))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return seen


def _journal(path: str, durable: bool) -> str:
    assert journal.append(path, list(OPS), durable)  # type: ignore[arg-type]
    return journal.journal_path(path)


def _spool(path: str, durable: bool) -> str:
    spool.append(path, list(OPS), durable)  # type: ignore[arg-type]
    return spool.spool_path(path)


@pytest.mark.parametrize("write", [_journal, _spool], ids=["journal", "spool"])
@pytest.mark.parametrize(
    ("durable", "lines", "expected"),
    [
        (True, 1, [["file", "dir"]]),  # the line made the file: its folder is synced too
        (True, 2, [["file", "dir"], ["file"]]),  # the next line: the file alone
        (False, 2, [[], []]),  # NORMAL: written, not synced (as a NORMAL commit)
    ],
    ids=["durable, first line", "durable, next line", "not durable"],
)
def test_a_durable_line_is_synced_with_its_folder_when_it_made_the_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    write: Callable[[str, bool], str],
    durable: bool,
    lines: int,
    expected: list[list[str]],
) -> None:
    path = str(tmp_path / "ledger.db")
    seen = _synced(monkeypatch)
    kinds = []
    for _ in range(lines):
        start = len(seen)
        target = write(path, durable)
        kinds.append([kind for kind, _ in seen[start:]])
        inodes = {kind: ino for kind, ino in seen[start:]}
        if "file" in inodes:
            assert inodes["file"] == os.stat(target).st_ino
        if "dir" in inodes:
            assert inodes["dir"] == os.stat(os.path.dirname(target)).st_ino
    assert kinds == expected


@pytest.mark.parametrize("write", [_journal, _spool], ids=["journal", "spool"])
def test_two_writers_making_a_file_at_once_sync_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: Callable[[str, bool], str]
) -> None:
    """Each sees the other's line after its own write: who made the file is asked before
    writing, so one of them syncs the folder (a slow fsync widens the window, as a disk's
    does)."""
    real = os.fsync
    seen: list[str] = []

    def slow_fsync(fd: int) -> None:
        folder = stat.S_ISDIR(os.fstat(fd).st_mode)
        seen.append("dir" if folder else "file")
        if not folder:
            time.sleep(0.005)
        real(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    for n in range(10):
        path = str(tmp_path / f"ledger{n}.db")
        seen.clear()
        writers = [threading.Thread(target=write, args=(path, True)) for _ in range(2)]
        for t in writers:
            t.start()
        for t in writers:
            t.join()
        assert seen.count("file") == 2 and "dir" in seen, (n, seen)


def test_a_folder_that_cannot_be_synced_still_takes_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Some filesystems refuse to sync a folder: the line is written and synced anyway."""
    real = os.fsync

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(22, "Invalid argument")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    path = str(tmp_path / "ledger.db")
    assert journal.append(path, list(OPS), True)  # type: ignore[arg-type]
    assert Path(journal.journal_path(path)).read_text().strip().count("\n") == 0  # one line


def test_a_durable_ledger_that_cannot_write_spools_synced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newer schema in the file: every record is spooled, and synced (``durable``)."""
    path = str(tmp_path / "ledger.db")
    Ledger(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {latest_version() + 1}")
    conn.close()
    seen = _synced(monkeypatch)
    with Ledger(path, durable=True) as ledger:
        assert ledger.degraded is not None
        guard = Guard(AgentDefinition(name="t"), ledger=ledger)
        guard.emit_sync(bash_call("ls", "toolu_1", "s1"))
    spooled = os.stat(spool.spool_path(path)).st_ino
    assert ("file", spooled) in seen
