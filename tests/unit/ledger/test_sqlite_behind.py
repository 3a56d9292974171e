"""Write-behind (``Ledger.write_behind``, what ``hookrails serve`` turns on): events that need
no session state are journaled before the answer and imported by a thread in batches.

Each test asserts what a user depends on: the event is durable when ``record`` returns
(in the journal or the file), every read through hookrails sees it, the bare file gets it
once its batch is imported (or at ``close``), the order against events that take the store
is kept, and every fault path (the journal not writable, the file locked during an import,
the process killed, the file deleted under the writer) ends with the record in the file.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from guardrails.definition.model import AgentDefinition
from guardrails.dispatch.guard import Guard
from guardrails.events import Event
from guardrails.ledger import journal
from guardrails.ledger.journal import journal_path
from guardrails.ledger.sqlite import Ledger
from guardrails.ledger.sqlite_behind import Behind
from tests._db import records
from tests.unit.ledger.conftest import bash_call

SID = "0b7f0000-0000-4000-8000-0000000000be"
#: a batch that never imports by itself within a test (only reads, writes and close do)
NEVER = 3600.0


def _pre(command: str, call: str, session: str = SID) -> Event:
    return bash_call(command, call, session)


def _bare(path: Path) -> list[tuple[str, str, str]]:
    """The file as sqlite3, Datasette or sqlite-utils read it: no journal imported."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT tool_call_id, decision, status FROM tool_calls ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


def _behind(
    path: Path, definition: AgentDefinition, busy_timeout: float = 5.0, **kw: float
) -> tuple[Ledger, Guard]:
    ledger = Ledger(str(path), definition=definition, busy_timeout=busy_timeout)
    ledger.write_behind(**{"delay": NEVER, "max_age": NEVER, **kw})
    return ledger, Guard(definition, ledger=ledger, check=False)


def _lose_the_file(path: Path) -> None:
    """The ledger file, its WAL and shared memory deleted under the writer."""
    for suffix in ("", "-wal", "-shm"):
        os.remove(str(path) + suffix)


def _import_now_and_lose_the_file(ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
    """The thread's import, with the file deleted right after the batch committed into it."""
    from guardrails.ledger import journal_import

    real = journal_import.import_journal

    def import_then_lose_the_file(*args: object) -> tuple[int, int]:
        got = real(*args)  # type: ignore[arg-type]
        _lose_the_file(Path(ledger.path))
        return got

    monkeypatch.setattr(journal_import, "import_journal", import_then_lose_the_file)
    try:
        assert ledger._behind is not None
        ledger._behind.import_now()
    finally:
        monkeypatch.setattr(journal_import, "import_journal", real)


def test_a_deny_is_in_the_journal_when_it_returns_and_every_read_sees_it(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    path = tmp_path / "ledger.db"
    ledger, guard = _behind(path, definition)
    try:
        assert guard.emit_sync(_pre("rm -rf build", "t1")).denied
        assert journal.waiting(str(path)) and _bare(path) == []  # durable, not imported yet
        assert ledger._behind is not None and ledger._behind.journaled == 1
        found = ledger.reader.query("SELECT tool_call_id, decision FROM tool_calls")
        assert found == [{"tool_call_id": "t1", "decision": "deny"}]  # a read imports first
        assert not journal.waiting(str(path))
    finally:
        ledger.close()


def test_the_thread_imports_a_batch_once_the_journal_is_quiet(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    path = tmp_path / "ledger.db"
    ledger, guard = _behind(path, definition, delay=0.01, max_age=0.5)
    try:
        for i in range(5):
            guard.emit_sync(_pre(f"rm -rf b{i}", f"t{i}"))
        deadline = time.monotonic() + 30
        while len(_bare(path)) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _bare(path) == [(f"t{i}", "deny", "denied") for i in range(5)]
        assert not journal.waiting(str(path))
    finally:
        ledger.close()


def test_close_imports_what_is_left(tmp_path: Path, definition: AgentDefinition) -> None:
    path = tmp_path / "ledger.db"
    ledger, guard = _behind(path, definition)
    guard.emit_sync(_pre("ls", "t1"))  # an allowed call: journaled past the halt gate
    guard.emit_sync(_pre("rm -rf x", "t2"))
    assert _bare(path) == []
    ledger.close()
    assert _bare(path) == [("t1", "allow", "pending"), ("t2", "deny", "denied")]
    assert not journal.waiting(str(path))


def test_an_event_that_needs_the_store_comes_after_what_was_journaled(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    path = tmp_path / "ledger.db"
    ledger, guard = _behind(path, definition)
    try:
        guard.emit_sync(_pre("ls", "t1"))
        guard.emit_sync(_pre("halt now", "t2"))  # a halt: its transaction, journal first
        assert [c[0] for c in _bare(path)] == ["t1", "t2"]
        after = guard.emit_sync(_pre("ls", "t3"))  # the halted session's call: denied
        assert after.denied and after.halted
        assert ledger._behind is not None and ledger._behind.journaled == 2  # t1, t3 (a deny)
    finally:
        ledger.close()
    assert [c[:2] for c in _bare(path)] == [("t1", "allow"), ("t2", "deny"), ("t3", "deny")]


def test_a_journaled_pending_call_can_be_marked_interrupted(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    path = tmp_path / "ledger.db"
    ledger, guard = _behind(path, definition)
    try:
        guard.emit_sync(_pre("ls", "t1"))
        assert _bare(path) == []
        ledger.mark_interrupted(SID, "t1", "the tool never ran", time.time())
        assert _bare(path) == [("t1", "allow", "interrupted")]
    finally:
        ledger.close()


def test_a_journal_that_cannot_be_written_sends_the_event_to_the_store(
    tmp_path: Path, definition: AgentDefinition, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ledger.db"
    ledger, guard = _behind(path, definition)
    os.mkdir(journal_path(str(path)))  # an append there fails (EISDIR)
    try:
        assert guard.emit_sync(_pre("rm -rf x", "t1")).denied
        assert _bare(path) == [("t1", "deny", "denied")]  # committed before it returned
        assert ledger._behind is not None and ledger._behind.journaled == 0
    finally:
        ledger.close()


def test_an_import_that_finds_the_file_locked_leaves_the_journal_for_the_next(
    tmp_path: Path, definition: AgentDefinition, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ledger.db"
    ledger, guard = _behind(path, definition, busy_timeout=0.05)
    try:
        guard.emit_sync(_pre("rm -rf x", "t1"))
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another writer holds the file past busy_timeout
        assert ledger._behind is not None
        ledger._behind.import_now()
        assert journal.waiting(str(path))  # kept, said in the log
        assert any("not imported" in r.getMessage() for r in caplog.records)
        other.execute("ROLLBACK")
        other.close()
        ledger._behind.import_now()
        assert _bare(path) == [("t1", "deny", "denied")]
    finally:
        ledger.close()


KILLED = """\
import os, sys
sys.path.insert(0, sys.argv[2])
from guardrails.definition.model import AgentDefinition
from guardrails.dispatch.guard import Guard
from guardrails.events import Event
from guardrails.ledger.sqlite import Ledger

definition = AgentDefinition.from_file(sys.argv[3])
ledger = Ledger(sys.argv[1], definition=definition)
ledger.write_behind(delay=3600, max_age=3600)
guard = Guard(definition, ledger=ledger, check=False)
for i in range(3):
    event = Event.from_claude({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/",
        "tool_name": "Bash", "tool_input": {"command": "rm -rf x"}, "tool_use_id": f"k{i}"})
    assert guard.emit_sync(event).denied
os._exit(0)  # killed: no close, no import
"""


@pytest.mark.slow
def test_what_a_killed_process_journaled_is_imported_by_the_next_one(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    path = tmp_path / "ledger.db"
    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    args = [str(path), str(tmp_path), str(tmp_path / "agent.yaml")]
    subprocess.run([sys.executable, str(script), *args], check=True, timeout=60)
    assert journal.waiting(str(path)) and _bare(path) == []
    Ledger(str(path)).close()  # the next writer (or reader) imports first
    assert _bare(path) == [(f"k{i}", "deny", "denied") for i in range(3)]


@pytest.fixture
def watched(
    tmp_path: Path, definition: AgentDefinition, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, Ledger, Guard]]:
    """A write-behind ledger whose file is looked at after every commit (the tests of a
    file deleted under it); closed at the end if the test did not close it first."""
    monkeypatch.setattr("guardrails.ledger.sqlite_watch._INTERVAL", 0.0)
    path = tmp_path / "ledger.db"
    ledger, guard = _behind(path, definition)
    try:
        yield path, ledger, guard
    finally:
        ledger.close()


def test_a_file_deleted_under_the_writer_gets_the_imported_records_again(
    watched: tuple[Path, Ledger, Guard],
) -> None:
    path, ledger, guard = watched
    guard.emit_sync(_pre("rm -rf a", "t1"))
    assert ledger._behind is not None
    ledger._behind.import_now()
    _lose_the_file(path)
    guard.emit_sync(_pre("rm -rf b", "t2"))
    ledger._behind.import_now()  # noticed before the import: into the file at the path
    ledger.close()
    assert _bare(path) == [("t2", "deny", "denied")]


@pytest.mark.parametrize(("delay", "max_age"), [(-1.0, 1.0), (2.0, 1.0), (float("nan"), 1.0)])
def test_a_delay_that_makes_no_sense_is_refused(
    tmp_path: Path, delay: float, max_age: float
) -> None:
    with pytest.raises(ValueError, match="0 <= delay <= max_age"):
        Behind(Ledger(str(tmp_path / "l.db")), delay, max_age)


def test_a_file_deleted_while_a_batch_was_imported_gets_the_batch_again(
    watched: tuple[Path, Ledger, Guard], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, ledger, guard = watched
    guard.emit_sync(_pre("rm -rf a", "t1"))
    guard.emit_sync(_pre("rm -rf b", "t2"))
    _import_now_and_lose_the_file(ledger, monkeypatch)
    ledger.close()
    assert _bare(path) == [("t1", "deny", "denied"), ("t2", "deny", "denied")]


def test_a_store_write_after_the_file_was_deleted_keeps_what_it_imported(
    watched: tuple[Path, Ledger, Guard],
) -> None:
    """Not the thread: the halt's own write imports the journaled deny first. That import
    follows the file too, so the deny is in the file now at the path."""
    path, ledger, guard = watched
    guard.emit_sync(_pre("rm -rf a", "t1"))  # journaled
    _lose_the_file(path)
    guard.emit_sync(_pre("halt now", "t2"))  # takes the store, which imports t1 first
    ledger.close()
    assert [c[0] for c in _bare(path)] == ["t1", "t2"]


def test_close_waits_for_an_append_under_way_and_imports_it(
    tmp_path: Path, definition: AgentDefinition, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request thread between its look at ``closed`` and its write when close() runs
    (a hook that returned late): its line is in the file after close, not left behind."""
    from guardrails.ledger import sqlite_behind

    path = tmp_path / "ledger.db"
    ledger, guard = _behind(path, definition)
    real = sqlite_behind.append  # type: ignore[attr-defined]
    appending = threading.Event()

    def slow_append(*args: object, **kw: object) -> bool:
        appending.set()
        time.sleep(0.1)
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite_behind, "append", slow_append)
    answered: list[bool] = []
    late = threading.Thread(
        target=lambda: answered.append(guard.emit_sync(_pre("rm -rf x", "late")).denied)
    )
    late.start()
    assert appending.wait(10)
    ledger.close()
    late.join(10)
    assert answered == [True]
    assert _bare(path) == [("late", "deny", "denied")] and not journal.waiting(str(path))


def test_appends_from_many_threads_never_fail_on_the_doorbell(
    tmp_path: Path, definition: AgentDefinition, caplog: pytest.LogCaptureFixture
) -> None:
    """Each thread yields the GIL right after the doorbell's ``locked()`` (where two threads
    could both see it locked and both release it: the second release raised, and a record
    already journaled was logged as not recorded)."""
    path = tmp_path / "ledger.db"
    ledger, guard = _behind(path, definition, delay=0.0, max_age=0.0)

    def yield_after_locked(frame: object, event: str, arg: object) -> None:
        if event == "c_return" and getattr(arg, "__name__", "") == "locked":
            time.sleep(0.0005)

    def calls(n: int) -> None:
        sys.setprofile(yield_after_locked)
        try:
            for i in range(25):
                guard.emit_sync(_pre("rm -rf x", f"c{n}-{i}", session=f"s{n}"))
        finally:
            sys.setprofile(None)

    try:
        threads = [threading.Thread(target=calls, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        ledger.close()
    assert not [r for r in caplog.records if "could not record" in r.getMessage()]
    assert len(_bare(path)) == 100


def test_a_batch_that_fell_back_to_one_by_one_is_kept_once_for_a_moved_file(
    watched: tuple[Path, Ledger, Guard], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line SQLite refuses sends the batch back one record at a time; the file is then
    found gone. The records imported are written again into the new file once each: the
    batch's rolled-back run is not kept (its hook runs were written twice)."""
    import json

    path, ledger, guard = watched
    guard.emit_sync(_pre("rm -rf a", "t1"))
    guard.emit_sync(_pre("rm -rf b", "t2"))
    work = journal_path(str(path))
    record = json.loads(records(work)[0])
    record["ops"] = [op for op in record["ops"] if op[0] == "pre"]
    record["ops"][0][1][4], record["ops"][0][1][5] = "bad", ["not", "bindable"]
    with open(work, "a", encoding="utf-8") as fh:  # a tool name SQLite cannot bind
        fh.write(json.dumps(record) + "\n")
    _import_now_and_lose_the_file(ledger, monkeypatch)
    ledger.close()
    conn = sqlite3.connect(path)
    try:
        runs = conn.execute(
            "SELECT tool_call_id, count(*) FROM hook_run_sets GROUP BY 1"
        ).fetchall()
    finally:
        conn.close()
    assert sorted(runs) == [("t1", 1), ("t2", 1)]
    assert [c[0] for c in _bare(path)] == ["t1", "t2"]
    assert Path(work + ".rejected").read_text().count("\n") == 1


def test_a_writer_that_could_not_write_still_imports_the_journal_before_it_writes(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    """Once degraded (a write found the file locked), the next read and the next write
    through this Ledger still import what it journaled first: order and reads kept."""
    path = tmp_path / "ledger.db"
    ledger, guard = _behind(path, definition, busy_timeout=0.05)
    try:
        guard.emit_sync(_pre("ls", "t0"))
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        guard.emit_sync(_pre("halt a", "t0h", session="s-other"))  # locked: spooled
        assert ledger.degraded is not None
        other.execute("ROLLBACK")
        other.close()
        guard.emit_sync(_pre("rm -rf a", "t1"))  # journaled
        seen = ledger.reader.query("SELECT tool_call_id FROM tool_calls ORDER BY id")
        assert [r["tool_call_id"] for r in seen] == ["t0", "t1"]
        guard.emit_sync(_pre("halt now", "t2"))  # the store again
    finally:
        ledger.close()
    assert [c[0] for c in _bare(path)][-2:] == ["t1", "t2"]


def test_journaled_calls_need_no_state_reads_and_a_halt_elsewhere_still_denies(
    tmp_path: Path, definition: AgentDefinition, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A journaled call settles nothing and changes no session state: the next call of the
    session reads no state (it did, every call). A halt another process records meanwhile
    still denies the session's next call (its marker sends the call to the file, which
    refuses it in its transaction)."""
    from guardrails.ledger.journal import JournalLedger

    path = tmp_path / "ledger.db"
    ledger, guard = _behind(path, definition)
    reads: list[str] = []
    real = Ledger.session_state

    def counted(self: Ledger, session_id: str, agent: str) -> object:
        reads.append(session_id)
        return real(self, session_id, agent)

    monkeypatch.setattr(Ledger, "session_state", counted)
    try:
        for i in range(4):
            assert not guard.emit_sync(_pre("ls", f"a{i}")).denied
        assert reads == [SID]  # the session's first call only
        other = JournalLedger(str(path), definition=definition)  # a hook process
        elsewhere = Guard(definition, ledger=False, check=False)
        elsewhere.ledger = other  # type: ignore[assignment]
        assert elsewhere.emit_sync(_pre("halt now", "h1")).halted
        other.close()
        after = guard.emit_sync(_pre("ls", "a9"))
        assert after.denied and after.halted
    finally:
        ledger.close()
    assert [c[:2] for c in _bare(path)][-1] == ("a9", "deny")
