"""The ledger file deleted or replaced under a running writer (docs/ledger.md, "Durability").

A long-lived writer (``hookrails serve``, an SDK agent) holds the file open. Before, when
the file or its WAL was deleted, or another file renamed over it, SQLite went on writing
into the old inode and every later call was lost without a word. Now the writer notices
after its next commit (two ``stat`` calls), writes that record again into the file at the
path (or the spool) and goes on there; ``recover`` brings in what was spooled.

Each case: 5 calls, the fault, 30 calls; every one of the 30 must be in the file now at
the path or in the spool, and in the file after ``recover``. The same under SIGKILL (no
clean close) is in ``tests/processes/test_ledger_faults.py``.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, Ledger
from guardrails.ledger.sqlite_watch import Watch
from tests._db import records, rows, value

BEFORE, AFTER = 5, 30


@pytest.fixture(autouse=True)
def _look_after_every_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each commit is looked after (a writer skips looks for 1 ms; here a fault must be
    found on the commit right after it, whatever the machine's speed)."""
    monkeypatch.setattr("guardrails.ledger.sqlite_watch._INTERVAL", 0.0)


def _remove(*suffixes: str) -> Callable[[str, Path], None]:
    def fault(db: str, tmp: Path) -> None:
        for suffix in suffixes:
            os.remove(db + suffix)

    return fault


def _replace_with_a_ledger(db: str, tmp: Path) -> None:
    """Another ledger (with a session of its own) renamed over the file."""
    other = str(tmp / "other.db")
    with Ledger(other) as ledger:
        Guard(AgentDefinition(), ledger=ledger).session("other-session").sync.run_tool(
            "echo", {"n": "theirs"}, lambda n: n, tool_use_id="toolu_theirs"
        )
    os.replace(other, db)


def _move_away(db: str, tmp: Path) -> None:
    os.replace(db, str(tmp / "moved-away.db"))


def _replace_with_garbage(db: str, tmp: Path) -> None:
    junk = tmp / "junk"
    junk.write_bytes(b"this is not a database\n" * 1000)
    os.replace(junk, db)


#: (id, the fault, whether the 5 earlier calls stay in the file at the path)
FAULTS: list[tuple[str, Callable[[str, Path], None], bool]] = [
    ("db-deleted", _remove(""), False),
    ("db-wal-and-shm-deleted", _remove("", "-wal", "-shm"), False),
    ("wal-deleted", _remove("-wal"), True),
    ("wal-and-shm-deleted", _remove("-wal", "-shm"), True),
    ("replaced-by-another-ledger", _replace_with_a_ledger, False),
    ("moved-away", _move_away, False),
    ("replaced-by-a-file-that-is-no-ledger", _replace_with_garbage, False),
]


def _ids(prefix: str, n: int) -> list[str]:
    return [f"toolu_{prefix}_{i:02d}" for i in range(n)]


def _run(guard: Guard, ids: list[str]) -> None:
    for i, call_id in enumerate(ids):
        run = guard.sync.run_tool("echo", {"i": i}, lambda i: i, tool_use_id=call_id)
        assert run.ok  # guarding never stops


def _in_file(db: str) -> dict[str, str]:
    try:
        return {r["tool_call_id"]: r["status"] for r in rows(db, "SELECT * FROM tool_calls")}
    except sqlite3.DatabaseError:
        return {}


def _in_spool(db: str) -> set[str]:
    spool = Path(db + ".spool.jsonl")
    if not spool.exists():
        return set()
    found = set()
    for line in records(spool):
        for name, params in json.loads(line)["ops"]:
            if name == "post":
                found.add(params[4])
    return found


@pytest.mark.parametrize(("id_", "fault", "kept"), FAULTS, ids=[f[0] for f in FAULTS])
def test_every_call_after_the_fault_is_recorded(
    tmp_path: Path,
    id_: str,
    fault: Callable[[str, Path], None],
    kept: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    db = str(tmp_path / "ledger.db")
    earlier, later = _ids("before", BEFORE), _ids("after", AFTER)
    ledger = Ledger(db)
    try:
        guard = Guard(AgentDefinition(), ledger=ledger)
        _run(guard, earlier)
        fault(db, tmp_path)
        with caplog.at_level(logging.WARNING, logger="guardrails.ledger"):
            _run(guard, later)
        assert any("reopening" in r.getMessage() for r in caplog.records)  # said, not silent
        missing = set(later) - set(_in_file(db)) - _in_spool(db)
        assert not missing, f"{len(missing)} of {AFTER} later calls are nowhere"
        if id_ == "replaced-by-a-file-that-is-no-ledger":
            assert ledger.degraded is not None and ledger.degraded.startswith("corrupt")
            os.replace(db, str(tmp_path / "junk-kept"))  # the fix: move it aside
        report = ledger.recover()
    finally:
        ledger.close()
    assert report.rejected == 0
    calls = _in_file(db)
    assert {calls.get(c) for c in later} == {"ok"}, calls
    assert all(c in calls for c in earlier) == kept
    if id_ == "replaced-by-another-ledger":  # its own rows stay, none of the old file's
        assert set(calls) == {"toolu_theirs", *later}
        assert value(db, "PRAGMA integrity_check") == "ok"
    if id_ == "moved-away":  # the old file keeps every call made while it was at the path
        assert set(_in_file(str(tmp_path / "moved-away.db"))) >= set(earlier)
    assert value(db, "SELECT count(*) FROM sessions") >= 1  # the new file got its session row


@pytest.mark.parametrize(("id_", "fault", "kept"), FAULTS[:5], ids=[f[0] for f in FAULTS[:5]])
def test_the_folder_shortcut_still_sees_every_fault(
    tmp_path: Path,
    id_: str,
    fault: Callable[[str, Path], None],
    kept: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A steady writer stats only the folder after a commit (its mtime changes with every
    entry created, deleted or renamed in it); the file and its WAL are looked at only
    when it changed. With the folder's mtime long past, the shortcut is taken, and every
    fault still changes the mtime."""
    db = str(tmp_path / "ledger.db")
    looks: list[str | None] = []
    real_look = Watch.look

    def spy(self: Watch) -> str | None:
        found = real_look(self)
        if self.path == db:  # not the other ledger a fault makes
            looks.append(found)
        return found

    monkeypatch.setattr(Watch, "look", spy)
    with Ledger(db) as ledger:
        guard = Guard(AgentDefinition(), ledger=ledger)
        _run(guard, _ids("before", BEFORE))
        past = os.stat(tmp_path).st_mtime - 3600
        os.utime(tmp_path, (past, past))
        _run(guard, _ids("settle", 1))  # a full look, which trusts the old mtime
        looks.clear()
        _run(guard, _ids("steady", 5))
        assert looks == []  # the shortcut: one stat of the folder per commit
        fault(db, tmp_path)
        _run(guard, _ids("after", 3))
        assert looks[0] is not None  # the fault was seen on the first commit after it
        ledger.recover()
    calls = _in_file(db)
    assert {calls.get(c) for c in _ids("after", 3)} == {"ok"}


def test_a_replaced_file_never_adopts_the_old_files_wal(tmp_path: Path) -> None:
    """SQLite neither checkpoints nor deletes the WAL of a file that was renamed over when
    it closes it; a connection to the new file would read the old file's pages from it.
    The writer checkpoints and empties it first."""
    db = str(tmp_path / "ledger.db")
    with Ledger(db) as ledger:
        guard = Guard(AgentDefinition(), ledger=ledger)
        _run(guard, _ids("old", 5))
        _replace_with_a_ledger(db, tmp_path)
        _run(guard, _ids("new", 1))
    assert set(_in_file(db)) == {"toolu_theirs", "toolu_new_00"}
    assert value(db, "PRAGMA integrity_check") == "ok"


def test_when_the_old_wal_cannot_be_emptied_it_is_set_aside(tmp_path: Path) -> None:
    """Another connection reads the old file (a snapshot the checkpoint must not pass):
    its WAL and shared memory are renamed ``.orphaned-<time>`` before the new file opens."""
    db = str(tmp_path / "ledger.db")
    ledger = Ledger(db, busy_timeout=0.1)
    reader = sqlite3.connect(db, isolation_level=None)
    try:
        guard = Guard(AgentDefinition(), ledger=ledger)
        _run(guard, _ids("old", 5))
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM tool_calls").fetchone()[0] == 5
        _run(guard, _ids("old_more", 2))  # frames the reader's snapshot does not hold
        _replace_with_a_ledger(db, tmp_path)
        _run(guard, _ids("new", 3))
    finally:
        reader.close()
        ledger.close()
    orphans = sorted(p.name.split(".orphaned-")[0] for p in tmp_path.glob("*.orphaned-*"))
    assert orphans == ["ledger.db-shm", "ledger.db-wal"]
    assert set(_in_file(db)) == {"toolu_theirs", *_ids("new", 3)}
    assert value(db, "PRAGMA integrity_check") == "ok"


def test_hooks_read_the_new_file_after_it_was_replaced(tmp_path: Path) -> None:
    """``ctx.ledger`` (the reader) reconnects: after the replacement it sees the new file."""
    seen: list[int] = []

    def count(event: Any, ctx: Any) -> None:
        seen.append(ctx.ledger.value("SELECT count(*) FROM tool_calls"))

    definition = AgentDefinition(hooks={"PreToolUse": [HookMatcher(hooks=[count])]})
    db = str(tmp_path / "ledger.db")
    with Ledger(db) as ledger:
        guard = Guard(definition, ledger=ledger)
        _run(guard, _ids("old", 3))
        _replace_with_a_ledger(db, tmp_path)
        _run(guard, _ids("new", 2))
    assert seen == [0, 1, 2, 3, 2]  # the 2nd new call sees the other ledger's row + 1st new


def test_idempotency_keys_follow_the_file_too(tmp_path: Path) -> None:
    """A key claim is a write like a record: after the file was deleted it goes to the
    file at the path, not into the deleted one."""
    from guardrails.builtins import IdempotencyGuard

    db = str(tmp_path / "ledger.db")
    guard_hook = IdempotencyGuard()
    definition = AgentDefinition(
        tools={"charge": {"side_effects": True}},
        hooks={
            e: [HookMatcher(matcher="*", hooks=[guard_hook])]
            for e in ("PreToolUse", "PostToolUse", "PostToolUseFailure")
        },
    )
    with Ledger(db) as ledger:
        guard = Guard(definition, ledger=ledger)
        assert guard.sync.run_tool("charge", {"amount": 1}, lambda amount: "paid").ok
        os.remove(db)
        assert guard.sync.run_tool("charge", {"amount": 2}, lambda amount: "paid").ok
        again = guard.sync.run_tool("charge", {"amount": 2}, lambda amount: "paid")
        assert again.replayed or again.denied  # the new file knows the key
    assert value(db, "SELECT count(*) FROM idempotency_keys") == 1
    assert value(db, "SELECT state FROM idempotency_keys") == "completed"


def test_a_file_that_only_looks_replaced_is_never_written_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Some network filesystems change a file's inode number while it stays the same
    file. The writer reopens it, finds the record it just committed there, writes
    nothing twice, and after three such alarms stops watching (saying so once)."""
    monkeypatch.setattr(Watch, "look", lambda self: "replaced")
    monkeypatch.setattr(Watch, "moved", lambda self: None if self.off else self.look())
    db = str(tmp_path / "ledger.db")
    prompts = AgentDefinition(hooks={"UserPromptSubmit": [HookMatcher(hooks=[lambda e, c: None])]})
    with caplog.at_level(logging.WARNING, logger="guardrails.ledger"), Ledger(db) as ledger:
        guard = Guard(prompts, ledger=ledger)
        _run(guard, _ids("call", 4))
        assert guard.sync.user_prompt_submit("hello").allowed
        assert ledger._watch.off
    assert value(db, "SELECT count(*) FROM tool_calls") == 4
    assert value(db, "SELECT count(*) FROM events") == 1
    assert value(db, "SELECT count(*) FROM hook_runs") == 1
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and "inode number changes" in said[0], said


@pytest.mark.parametrize(("id_", "fault", "kept"), FAULTS[:5], ids=[f[0] for f in FAULTS[:5]])
def test_records_made_between_two_looks_are_written_again(
    tmp_path: Path,
    id_: str,
    fault: Callable[[str, Path], None],
    kept: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Back-to-back commits skip looks (``_INTERVAL``); those committed into the old file
    meanwhile are kept and written again once a look (here, a full pending list, then
    the close) finds the file gone."""
    monkeypatch.setattr("guardrails.ledger.sqlite_watch._INTERVAL", 3600.0)
    db = str(tmp_path / "ledger.db")
    later = _ids("after", 70)  # 140 commits: two looks at 64 pending, then the close
    with Ledger(db) as ledger:
        guard = Guard(AgentDefinition(), ledger=ledger)
        _run(guard, _ids("before", BEFORE))  # the first commit looks; the rest wait
        fault(db, tmp_path)
        _run(guard, later)
    calls = _in_file(db)
    assert {calls.get(c) for c in later} == {"ok"}, calls
    if id_ == "replaced-by-another-ledger":
        assert value(db, "SELECT count(*) FROM tool_calls") == 1 + BEFORE + len(later)
    assert value(db, "SELECT count(*) FROM tool_calls") == len(set(calls))
    assert value(db, "PRAGMA integrity_check") == "ok"
