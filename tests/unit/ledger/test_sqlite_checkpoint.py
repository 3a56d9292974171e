"""Checkpoints of a long-lived writer's WAL run on a thread of their own."""

from __future__ import annotations

import os
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
    monkeypatch.setattr(ckpt, "_WAL_FRAMES", 16)
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
    monkeypatch.setattr(ckpt, "_WAL_FRAMES", 0)
    monkeypatch.setattr(ckpt, "_RING_STEP", 1)
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


def test_under_a_steady_stream_of_commits_the_log_starts_over_near_the_bound(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each commit of a busy writer lands while the thread copies, so the thread alone never
    sees the whole log copied and the log never started over: it grew to INLINE_PAGES (64 MB)
    before the writer's own checkpoint, a commit of ~35 ms. The writer now copies the few
    frames the thread left, and its next transaction starts the log over."""
    monkeypatch.setattr(ckpt, "_CHECK_EVERY", 4)
    monkeypatch.setattr(ckpt, "_WAL_FRAMES", 64)
    monkeypatch.setattr(ckpt, "INLINE_PAGES", 1_000_000)  # the writer's own never runs
    with Ledger(ledger_path) as ledger:
        session = Guard(AgentDefinition(name="ckpt"), ledger=ledger).session("s").sync
        starts, last, top = 0, 0, 0
        deadline = time.monotonic() + 30
        while starts < 3:
            assert time.monotonic() < deadline, f"the log started over {starts} times"
            assert session.run_tool("echo", {"text": "x" * 200}, lambda text: text).ok
            frames = ledger._checkpoints._frames()
            assert frames >= 0  # the wal-index header was read
            starts += frames < last
            last, top = frames, max(top, frames)
        # near the bound: the frames of the commits made while the thread copied, not more
        assert top < 64 * 20, top
    assert value(ledger_path, "SELECT count(*) FROM tool_calls WHERE status = 'ok'") > 0


@pytest.mark.slow  # waits for the checkpoint thread to settle, in real time
def test_a_wal_that_grew_past_the_bound_does_not_ring_on_every_look(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the wal-index cannot be read, the WAL file's size rings the thread. The file
    never shrinks by itself: past the bound, its size rings only when it grew again, so small
    commits inside the file ring for no checkpoint (before, one per _CHECK_EVERY commits for
    the rest of the process, each an fsync of WAL and file)."""
    monkeypatch.setattr(ckpt, "_CHECK_EVERY", 4)
    monkeypatch.setattr(ckpt, "_MX_FRAME", 1 << 40)  # past the -shm file's end: unreadable
    with Ledger(ledger_path) as ledger:
        session = Guard(AgentDefinition(name="ckpt"), ledger=ledger).session("s").sync
        for i in range(ckpt._WAL_BYTES // 16_000):  # big results: the WAL grows past the bound
            assert session.run_tool("echo", {"n": i}, lambda n: "x" * 20_000).ok
        _wait_for(lambda: ledger._checkpoints.runs > 0)

        def started_over() -> bool:  # after a whole checkpoint the log starts over, inside
            before = os.path.getsize(ledger_path + "-wal")  # the file: a write grows it no more
            _calls(ledger, 1)
            return os.path.getsize(ledger_path + "-wal") == before

        wal = ledger_path + "-wal"
        for _ in range(5):  # a loaded machine may let the log grow once more: then again
            _wait_for(started_over)
            _calls(ledger, 4)  # looks that see the file as it stays
            runs = _settled(ledger)
            size = os.path.getsize(wal)
            _calls(ledger, 40)  # small calls: ten looks at the WAL
            if os.path.getsize(wal) == size:  # it did not grow: nothing may ring
                assert _settled(ledger) == runs
                break
        else:
            pytest.fail("the WAL grew during every round of small calls")


def _settled(ledger: Ledger) -> int:
    """The checkpoint thread's runs once no new one started for a while (it was rung)."""
    runs = -1
    while runs != ledger._checkpoints.runs:
        runs = ledger._checkpoints.runs
        time.sleep(0.3)
    return runs
