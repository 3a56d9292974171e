"""Checkpoints of a long-lived writer's WAL run on a thread of their own."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard
from guardrails.ledger import Ledger
from guardrails.ledger import sqlite_checkpoint as ckpt
from tests._db import value


def _calls(ledger: Ledger, n: int) -> None:
    session = Guard(AgentDefinition(name="ckpt"), ledger=ledger).session("s").sync
    for i in range(n):
        assert session.run_tool("echo", {"text": f"{i}" * 50}, lambda text: text).ok


def _wait_for(check: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_a_long_lived_writer_hands_its_checkpoints_to_the_thread(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ckpt, "_CHECK_EVERY", 4)
    monkeypatch.setattr(ckpt, "_RING_CHANGES", 8)
    with Ledger(ledger_path) as ledger:
        _calls(ledger, 200)
        conn = ledger._conn
        assert conn is not None
        # the writer no longer checkpoints at SQLite's 1,000 pages: the thread does
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == ckpt.INLINE_PAGES
        _wait_for(lambda: ledger._checkpoints.runs > 0)
        # a passive checkpoint copied the WAL into the file: a new reader sees every call
        # without the WAL
        assert value(ledger_path, "SELECT count(*) FROM tool_calls") == 200
    assert value(ledger_path, "SELECT count(*) FROM tool_calls WHERE status = 'ok'") == 200


def test_a_short_lived_writer_never_starts_the_thread(ledger_path: str) -> None:
    """A ``hookrails hook`` process writes once or twice: SQLite's own checkpointing stays."""
    with Ledger(ledger_path) as ledger:
        _calls(ledger, 2)
        assert ledger._checkpoints._wake is None
        conn = ledger._conn
        assert conn is not None
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000


def test_close_ends_the_thread_and_the_next_open_checkpoints_anew(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ckpt, "_CHECK_EVERY", 2)
    monkeypatch.setattr(ckpt, "_RING_CHANGES", 1)
    ledger = Ledger(ledger_path)
    _calls(ledger, 20)
    first = ledger._checkpoints
    _wait_for(lambda: first.runs > 0)
    ledger.close()
    assert first.closed
    _wait_for(lambda: not first.running)  # the thread ended (its connection closed)
    runs = first.runs
    first._ring()  # a ring after close starts nothing that checkpoints this file again
    time.sleep(0.05)
    assert first.runs == runs
    with Ledger(ledger_path) as again:
        _calls(again, 20)
        assert again._checkpoints is not first
        _wait_for(lambda: again._checkpoints.runs > 0)
    assert value(ledger_path, "SELECT count(*) FROM tool_calls") == 40


def _wal_restarts(path: str) -> int:
    """The WAL header's checkpoint sequence number: SQLite adds one each time the log
    starts over (https://www.sqlite.org/fileformat2.html#walformat; the -wal file holds no
    lock, so reading it here takes none from the writer)."""
    with open(path + "-wal", "rb") as f:
        return int.from_bytes(f.read(16)[12:16], "big")


def test_under_a_steady_stream_of_commits_the_log_starts_over_near_the_bound(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each commit of a busy writer lands while the thread copies, so the thread alone never
    sees the whole log copied and the log never started over: it grew to INLINE_PAGES (64 MB)
    before the writer's own checkpoint, a commit of ~35 ms. The writer now copies the few
    frames the thread left, and its next transaction starts the log over."""
    monkeypatch.setattr(ckpt, "_CHECK_EVERY", 4)
    monkeypatch.setattr(ckpt, "_RING_CHANGES", 25)  # ~64 frames
    monkeypatch.setattr(ckpt, "INLINE_PAGES", 1_000_000)  # the writer's own never runs
    with Ledger(ledger_path) as ledger:
        session = Guard(AgentDefinition(name="ckpt"), ledger=ledger).session("s").sync
        assert session.run_tool("echo", {"text": "x"}, lambda text: text).ok
        first = _wal_restarts(ledger_path)
        deadline = time.monotonic() + 30
        while _wal_restarts(ledger_path) < first + 3:
            assert time.monotonic() < deadline, "the log did not start over three times"
            assert session.run_tool("echo", {"text": "x" * 200}, lambda text: text).ok
        # near the bound: the frames of the commits made while the thread copied, not more
        page = value(ledger_path, "PRAGMA page_size")
        frames = (os.path.getsize(ledger_path + "-wal") - 32) // (page + 24)
        assert frames < 64 * 20, frames
    assert value(ledger_path, "SELECT count(*) FROM tool_calls WHERE status = 'ok'") > 0


def test_the_writer_leaves_the_locks_of_the_process_alone(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closing a descriptor of the -shm file drops every POSIX lock this process holds on
    it. A checkpointer that read the wal-index through its own descriptor dropped, at
    close, the read lock of another connection of the process: another process's TRUNCATE
    checkpoint then reset the log under that reader, whose next read was "malformed"."""
    monkeypatch.setattr(ckpt, "_CHECK_EVERY", 2)
    ledger = Ledger(ledger_path)
    _calls(ledger, 40)  # a long-lived writer: it has looked after its log by now
    reader = sqlite3.connect(ledger_path, isolation_level=None)
    try:
        reader.execute("BEGIN")
        before = reader.execute("SELECT count(*), max(id) FROM tool_calls").fetchone()
        ledger.close()
        other = subprocess.run(
            [sys.executable, "-c", _TRUNCATE, ledger_path],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        assert other.stdout.split()[0] == "1", other.stdout  # busy: the reader holds the log
        assert reader.execute("SELECT count(*), max(id) FROM tool_calls").fetchone() == before
        reader.execute("COMMIT")
    finally:
        reader.close()
    assert value(ledger_path, "PRAGMA quick_check") == "ok"


def _shm_locks(path: str) -> list[str]:
    """This process's locks on ``path``-shm, as the kernel lists them."""
    inode = os.stat(path + "-shm").st_ino
    with open("/proc/locks") as f:
        fields = [line.split() for line in f]
    return [
        " ".join(x[3:8]) for x in fields if x[4] == str(os.getpid()) and x[5].endswith(f":{inode}")
    ]


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="lists file locks on Linux only")
def test_a_writer_that_follows_a_replaced_file_keeps_its_locks(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checkpoint thread's connection to the old file shares the ``-shm`` at the path:
    closed after the new connection opened, it dropped that one's locks (they are the
    process's), and the next process to open the file reset the shared memory under it."""
    from guardrails.ledger import sqlite_watch

    monkeypatch.setattr(ckpt, "_CHECK_EVERY", 2)
    monkeypatch.setattr(ckpt, "_RING_CHANGES", 1)
    monkeypatch.setattr(sqlite_watch, "_INTERVAL", 0.0)  # every commit looks
    with Ledger(ledger_path) as ledger:
        _calls(ledger, 10)
        _wait_for(lambda: ledger._checkpoints.runs > 0)
        assert _shm_locks(ledger_path)
        src, dst = sqlite3.connect(ledger_path), sqlite3.connect(ledger_path + ".bak")
        src.backup(dst)
        dst.close()
        src.close()
        os.replace(ledger_path + ".bak", ledger_path)  # a backup renamed over the file
        _calls(ledger, 3)  # the writer follows it
        time.sleep(0.2)  # what the old checkpoint thread would close, it has closed by now
        assert _shm_locks(ledger_path)
    assert value(ledger_path, "SELECT count(*) FROM tool_calls") >= 3


class _SlowToClose(sqlite3.Connection):
    def close(self) -> None:
        time.sleep(0.3)
        super().close()


def test_close_leaves_no_wal_even_while_the_thread_closes_its_connection(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last connection to close folds the WAL into the file and removes it. When the
    checkpoint thread's was the last (it closes on its own time), close() returned with
    the WAL still beside the file, and a copy of the bare file then missed the last calls."""
    monkeypatch.setattr(ckpt, "_CHECK_EVERY", 2)
    monkeypatch.setattr(ckpt, "_RING_CHANGES", 1)
    ledger = Ledger(ledger_path)
    _calls(ledger, 1)  # the writer's connection: a plain one
    connect = sqlite3.connect  # the thread's, made at its first ring: slow to close
    monkeypatch.setattr(
        ckpt.sqlite3, "connect", lambda *a, **k: connect(*a, factory=_SlowToClose, **k)
    )
    _calls(ledger, 10)
    _wait_for(lambda: ledger._checkpoints.runs > 0)
    monkeypatch.setattr(ckpt.sqlite3, "connect", connect)
    ledger.close()
    assert not os.path.exists(ledger_path + "-wal")


#: another process writes, then asks for a TRUNCATE checkpoint: busy while a reader reads
_TRUNCATE = """
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=5)
c.execute("CREATE TABLE IF NOT EXISTS filler (x)")
for _ in range(50):
    c.execute("INSERT INTO filler VALUES (randomblob(3000))")
print(*c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone())
for _ in range(50):
    c.execute("INSERT INTO filler VALUES (randomblob(3000))")
"""
