"""The journal (``guardrails.ledger.journal``): a hook process's records without SQLite.

What needs no session state is appended to ``<ledger>.journal.jsonl``; every SQLite writer
and reader imports it first, exactly once, and a line it cannot import goes to
``.rejected`` with why. A PreToolUse that would run is journaled only while its session
has no halt marker.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from guardrails.definition.model import AgentDefinition
from guardrails.dispatch.guard import Guard
from guardrails.events import Event
from guardrails.ledger import journal
from guardrails.ledger.journal import JournalLedger, _journals, halts_folder, journal_path
from guardrails.ledger.journal_import import import_journal, import_pending
from guardrails.ledger.session_state import StateChange
from guardrails.ledger.sqlite import DEFAULT_MAX_ARGUMENTS, DEFAULT_MAX_OUTPUT, Ledger
from tests._db import rows
from tests.unit.ledger.conftest import bash_call

SID = "0b7f0000-0000-4000-8000-00000000000a"


def _pre(command: str, call: str, session: str = SID) -> Event:
    return bash_call(command, call, session)


def _hook_process(path: Path, definition: AgentDefinition, event: Event) -> JournalLedger:
    """What ``hookrails hook`` does with one event (its Guard, its JournalLedger)."""
    ledger = JournalLedger(str(path), definition=definition)
    guard = Guard(definition, ledger=False, check=False)
    guard.ledger = ledger  # type: ignore[assignment]
    guard.emit_sync(event)
    ledger.close(checkpoint=False)
    return ledger


def _calls(path: Path) -> list[tuple[str, str, str]]:
    found = rows(path, "SELECT tool_call_id, decision, status FROM tool_calls ORDER BY id")
    return [(r["tool_call_id"], r["decision"], r["status"]) for r in found]


def _ready(path: Path) -> None:
    """A ledger file opened once by a writer: its halt markers are kept from then on."""
    Ledger(str(path)).close()


@pytest.mark.parametrize(
    ("change", "how"),
    [
        (None, 1),
        (StateChange(prompt_id="p1"), 1),  # a prompt id alone: the next active event applies it
        (StateChange(gate=True, prompt_id="p1"), 2),
        (StateChange(gate=True, inject=5, budget=10), 0),
        (StateChange(gate=True, new_turn=True), 0),
        (StateChange(gate=True, halt="why"), 0),
        (StateChange(inject=5, budget=10), 0),
        (StateChange(new_turn=True), 0),
        (StateChange(halt="why"), 0),
        (StateChange(end_turn=True), 0),
    ],
)
def test_only_what_needs_no_session_state_is_journaled(change: Any, how: int) -> None:
    assert _journals(change) == how


def test_the_caps_are_the_ledgers() -> None:
    assert journal._CAP == DEFAULT_MAX_OUTPUT == DEFAULT_MAX_ARGUMENTS


def test_a_deny_is_journaled_and_every_reader_sees_it(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    path = tmp_path / "ledger.db"
    _ready(path)
    ledger = _hook_process(path, definition, _pre("rm -rf build", "t1"))
    assert ledger.journaled == 1 and ledger._store is None  # SQLite never opened
    assert Path(journal_path(str(path))).exists()
    with Ledger(str(path)) as reader_side:  # a reader (ctx.ledger, serve) imports first
        found = reader_side.reader.query("SELECT tool_call_id, decision FROM tool_calls")
    assert found == [{"tool_call_id": "t1", "decision": "deny"}]
    assert not journal.waiting(str(path))


def test_an_open_writer_imports_before_session_state_and_a_write(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    path = tmp_path / "ledger.db"
    with Ledger(str(path)) as led:  # open before anything was journaled
        _hook_process(path, definition, _pre("rm -rf a", "t1"))
        assert journal.waiting(str(path))
        led.session_state(SID, "journaled")
        assert not journal.waiting(str(path))
        _hook_process(path, definition, _pre("rm -rf b", "t2"))
        guard = Guard(definition, ledger=led, check=False)
        guard.emit_sync(_pre("rm -rf c", "t3"))  # its write imports t2 first
        assert not journal.waiting(str(path))
        ids = [r["id"] for r in led.reader.query("SELECT id FROM tool_calls ORDER BY id")]
    assert [c[0] for c in _calls(path)] == ["t1", "t2", "t3"] and len(ids) == 3


def test_import_pending_is_the_cli_commands_first_step(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    path = tmp_path / "ledger.db"
    _ready(path)
    _hook_process(path, definition, _pre("rm -rf b", "t2"))
    assert journal.waiting(str(path))
    assert import_pending(str(path)) is None
    assert not journal.waiting(str(path))


def test_import_pending_is_quiet_about_lines_appended_after_its_import(
    tmp_path: Path, definition: AgentDefinition, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A running serve (or hook) appends while a ``hookrails ledger`` command imports: the
    new journal holds records newer than the read, not records its import left behind."""
    path = tmp_path / "ledger.db"
    _ready(path)
    _hook_process(path, definition, _pre("rm -rf a", "t1"))
    real_init = Ledger.__init__

    def open_then_another_appends(self: Ledger, *args: Any, **kw: Any) -> None:
        real_init(self, *args, **kw)  # imports t1
        _hook_process(path, definition, _pre("rm -rf b", "t2"))

    monkeypatch.setattr(Ledger, "__init__", open_then_another_appends)
    assert import_pending(str(path)) is None
    monkeypatch.setattr(Ledger, "__init__", real_init)
    assert journal.waiting(str(path)) and [c[0] for c in _calls(path)] == ["t1", "t2"]


def test_import_pending_says_so_when_its_import_could_not_take_the_journal(
    tmp_path: Path, definition: AgentDefinition, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ledger.db"
    _ready(path)
    _hook_process(path, definition, _pre("rm -rf a", "t1"))
    monkeypatch.setattr("guardrails.ledger.journal_import.import_journal", _locked_out)
    assert import_pending(str(path)) == (
        f"records of hook processes still wait in {journal_path(str(path))}"
    )


def _locked_out(*args: Any, **kw: Any) -> tuple[int, int]:
    import sqlite3

    raise sqlite3.OperationalError("database is locked")


def test_an_allowed_call_is_journaled_until_its_session_halts(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    path = tmp_path / "ledger.db"
    _ready(path)
    assert _hook_process(path, definition, _pre("ls", "t1")).journaled == 1
    halting = _hook_process(path, definition, _pre("halt", "t2"))
    assert halting.journaled == 0  # a halt is settled in the store, with its marker
    later = _hook_process(path, definition, _pre("ls", "t3"))
    assert later.journaled == 0  # the session may be halted: the store decides
    other = _hook_process(path, definition, _pre("ls", "u1", session="another-session"))
    assert other.journaled == 1
    assert _calls(path) == [
        ("t1", "allow", "pending"),
        ("t2", "deny", "denied"),
        ("t3", "deny", "denied"),
        ("u1", "allow", "pending"),
    ]


def test_no_gate_is_journaled_before_a_writer_kept_the_markers(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    path = tmp_path / "ledger.db"
    ledger = _hook_process(path, definition, _pre("ls", "t1"))  # a new file: no markers yet
    assert ledger.journaled == 0
    assert Path(halts_folder(str(path))).is_dir()  # the store's open made them


def test_halts_an_older_hookrails_recorded_get_their_markers(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    path = tmp_path / "ledger.db"
    _hook_process(path, definition, _pre("halt", "t1"))
    shutil.rmtree(halts_folder(str(path)))  # as an older hookrails left it
    _ready(path)  # the next writer seeds them from session_state
    assert _hook_process(path, definition, _pre("ls", "t2")).journaled == 0
    assert _calls(path)[-1] == ("t2", "deny", "denied")


#: session ids the file keeps otherwise than the event sends them (a lone surrogate is
#: stored as its escape), and a plain one
ODD_SESSIONS = ["s-\udc80-low", "s-\ud800-high", "s-\ud83d\ude00-pair-as-two", SID]


@pytest.mark.parametrize("session", ODD_SESSIONS, ids=["low", "high", "pair", "plain"])
def test_a_halt_seeded_from_the_file_is_the_marker_the_sessions_calls_look_for(
    tmp_path: Path, definition: AgentDefinition, session: str
) -> None:
    """The markers folder made again from the file (an older hookrails, a retired folder)
    holds the marker a call of the halted session looks for, whatever its id holds: its
    gate takes the store and is denied, never journaled."""
    path = tmp_path / "ledger.db"
    _ready(path)
    _hook_process(path, definition, _pre("halt", "t1", session))
    assert journal.may_be_halted(str(path), session, "journaled")
    shutil.rmtree(halts_folder(str(path)))
    _ready(path)  # seeded from session_state
    assert journal.may_be_halted(str(path), session, "journaled")
    assert _hook_process(path, definition, _pre("ls", "t2", session)).journaled == 0
    assert _calls(path)[-1] == ("t2", "deny", "denied")


def test_prune_removes_the_markers_of_sessions_no_longer_halted(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    """``prune`` removes the markers of sessions the file no longer holds halted (a new
    turn ended the halt; prune deleted an old state): their calls are journaled again. A
    session still halted keeps its marker and its calls are still denied; a dry run
    counts and removes nothing."""
    from guardrails.events import UserPromptSubmit
    from guardrails.ledger.admin import prune_ledger
    from guardrails.results import Decision

    path = tmp_path / "ledger.db"
    _ready(path)
    halted, resumed, old = "s-halted", "s-resumed", "s-old"
    for n, session in enumerate((halted, resumed, old)):
        _hook_process(path, definition, _pre("halt", f"h{n}", session))
    day = 86_400.0
    with Ledger(str(path)) as led:
        prompt = Decision(UserPromptSubmit(session_id=resumed, cwd="/tmp", prompt="again"))
        led.record(prompt, time.time(), agent="journaled", tenant=None,
                   change=StateChange(new_turn=True))  # fmt: skip
        led._conn.execute(  # type: ignore[union-attr]
            "UPDATE session_state SET updated_at = '2000-01-01T00:00:00.000Z' WHERE session_id = ?",
            (old,),
        )
    marked = {s: journal.may_be_halted(str(path), s, "journaled") for s in (halted, resumed, old)}
    assert marked == {halted: True, resumed: True, old: True}  # markers stay until a prune
    dry = prune_ledger(str(path), keep_days=30, dry_run=True)
    assert dry.halt_markers == 2 and journal.may_be_halted(str(path), resumed, "journaled")
    report = prune_ledger(str(path), keep_days=30, now=time.time() + day)
    assert report.halt_markers == 2
    assert "deleted 2 halt markers of sessions no longer halted" in report.lines()
    marked = {s: journal.may_be_halted(str(path), s, "journaled") for s in (halted, resumed, old)}
    assert marked == {halted: True, resumed: False, old: False}
    assert _hook_process(path, definition, _pre("ls", "t1", resumed)).journaled == 1
    assert _hook_process(path, definition, _pre("ls", "t2", halted)).journaled == 0
    calls = {c[0]: c[1:] for c in _calls(path)}
    assert calls["t1"] == ("allow", "pending") and calls["t2"] == ("deny", "denied")


def _journal_lines(path: Path, n: int, start: int = 0) -> list[str]:
    return [
        json.dumps(
            {
                "v": 1,
                "ops": [
                    ["session", [SID, "a", None, "/tmp", "2026-01-01T00:00:00.000Z",
                                 "2026-01-01T00:00:00.000Z"]],
                    ["pre", [SID, "a", None, None, f"c{i}", "Bash", "{}", "{}", "h", "deny",
                             "no", "denied", "2026-01-01T00:00:00.000Z",
                             "2026-01-01T00:00:00.000Z", 0.0, None, None]],
                ],
            }
        )
        + "\n"
        for i in range(start, start + n)
    ]  # fmt: skip


def test_an_import_that_stopped_before_its_commit_is_resumed(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    _ready(path)
    work = journal_path(str(path))
    Path(work + ".importing").write_text("".join(_journal_lines(path, 3)))
    Path(work).write_text("".join(_journal_lines(path, 2, start=3)))
    with Ledger(str(path)) as led:
        assert led.reader.value("SELECT count(*) FROM tool_calls") == 5
    assert not journal.waiting(str(path))


def test_an_import_that_stopped_after_its_commit_imports_nothing_twice(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    _ready(path)
    lines = _journal_lines(path, 4)
    work = journal_path(str(path))
    Path(work).write_text("".join(lines))
    import_pending(str(path))
    # killed between the COMMIT and the removal: the file it took is still there
    Path(work + ".importing").write_text("".join(lines))
    Path(work).write_text("".join(_journal_lines(path, 1, start=4)))
    import_pending(str(path))
    ids = [r["tool_call_id"] for r in rows(path, "SELECT tool_call_id FROM tool_calls")]
    assert sorted(ids) == ["c0", "c1", "c2", "c3", "c4"]


def _event_line(agent: str, at: str = "2026-01-01T00:00:00.000Z") -> str:
    payload = json.dumps({"agent_id": agent, "agent_type": "Explore"})
    ops = [
        ["session", [SID, "a", None, "/tmp", at, at]],
        ["event", [SID, "SubagentStart", agent, "Explore", payload, "allow", None, 0, at]],
    ]
    return json.dumps({"v": 1, "ops": ops}) + "\n"


def test_a_resumed_import_tells_apart_two_events_of_one_millisecond(tmp_path: Path) -> None:
    """Two subagents of one session starting in the same millisecond: the import that took
    the second stopped before its commit. Resuming it, the first one's row (same session,
    event, time and decision) made the second look imported already, and it was dropped."""
    path = tmp_path / "ledger.db"
    _ready(path)
    work = journal_path(str(path))
    Path(work).write_text(_event_line("agent-A"))
    import_pending(str(path))
    Path(work + ".importing").write_text(_event_line("agent-B"))  # taken, never committed
    import_pending(str(path))
    agents = [r["agent_id"] for r in rows(path, "SELECT agent_id FROM events ORDER BY id")]
    assert agents == ["agent-A", "agent-B"]
    assert not journal.waiting(str(path))


@pytest.mark.parametrize("kind", ["journal", "spool"])
def test_a_file_a_killed_importer_committed_is_adopted_without_importing_it_twice(
    tmp_path: Path, kind: str
) -> None:
    """Importer Z committed what it took and was killed before removing its ``.importing``
    file; importer Y had looked for such a file before Z made it, so it adopts the file as
    one that stopped before its COMMIT (the lock died with Z). Each record is looked up
    first: events, which have no key to upsert on, were imported twice."""
    path = tmp_path / "ledger.db"
    _ready(path)
    work = journal_path(str(path)) if kind == "journal" else str(path) + ".spool.jsonl"
    z = _event_line("agent-A") + _event_line("agent-B")
    Path(work).write_text(z)
    import sqlite3

    from guardrails.ledger.sqlite_recover import import_spool
    from guardrails.ledger.sqlite_write import SQL, execute

    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert import_spool(conn, work, SQL, execute) == (2, 0)  # Z's COMMIT
        Path(work + ".importing").write_text(z)  # Z killed before removing it
        Path(work).write_text(_event_line("agent-C"))
        assert import_spool(conn, work, SQL, execute) == (1, 0)  # Y
    finally:
        conn.close()
    agents = [r["agent_id"] for r in rows(path, "SELECT agent_id FROM events ORDER BY id")]
    assert agents == ["agent-A", "agent-B", "agent-C"]
    assert not os.path.exists(work + ".importing")


@pytest.mark.parametrize("where", ["", ".importing"], ids=["journal", "importing"])
def test_a_folder_where_the_journal_belongs_is_moved_aside(
    tmp_path: Path, definition: AgentDefinition, where: str
) -> None:
    """A folder at the journal's path was taken as a file: every later import failed on it
    ("Is a directory"), so nothing journaled since reached the file (a model could so hide
    its calls from every query). It is moved aside, with what it holds."""
    path = tmp_path / "ledger.db"
    _ready(path)
    folder = Path(journal_path(str(path)) + where)
    folder.mkdir()
    (folder / "kept.txt").write_text("kept")
    _hook_process(path, definition, _pre("rm -rf a", "t1"))
    _hook_process(path, definition, _pre("rm -rf b", "t2"))
    assert [c[0] for c in _calls(path)] == ["t1", "t2"]
    aside = [p for p in tmp_path.iterdir() if ".not-a-file-" in p.name]
    assert len(aside) == 1 and (aside[0] / "kept.txt").read_text() == "kept"
    assert not journal.waiting(str(path))


def _committed_not_removed(path: Path) -> tuple[str, Any]:
    """Importer A, between its COMMIT of three journaled calls and its removal of the file
    it took (the file taken again, and held): the journal's path, and A's take."""
    from guardrails.ledger import spool as spooled

    _ready(path)
    lines = _journal_lines(path, 3)
    work = journal_path(str(path))
    Path(work).write_text("".join(lines))
    import_pending(str(path))  # A's commit
    Path(work).write_text("".join(lines))
    return work, spooled.take(work)


@pytest.mark.parametrize("leftover", [True, False], ids=["importing-left", "journal-only"])
def test_an_importer_that_gets_the_lock_before_the_last_one_removed_its_file_takes_nothing(
    tmp_path: Path, leftover: bool
) -> None:
    """Importer A committed the lines it took and has not removed its ``.importing``
    file; B gets the write lock meanwhile (every writer imports first): B takes nothing, at
    once, and fails on nothing; what was journaled since waits for the next import."""

    path = tmp_path / "ledger.db"
    work, held = _committed_not_removed(path)
    if not leftover:
        Path(work).write_text("".join(_journal_lines(path, 1, start=3)))
    try:
        import_pending(str(path))  # B
    finally:
        held.finish()
    import_pending(str(path))
    ids = sorted(r["tool_call_id"] for r in rows(path, "SELECT tool_call_id FROM tool_calls"))
    assert ids == ["c0", "c1", "c2"] + ([] if leftover else ["c3"])
    assert not journal.waiting(str(path))


def test_an_importer_waits_briefly_for_the_last_one_to_remove_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The usual case of that window: A removes its file a few system calls after its
    COMMIT, while B waits briefly, so B imports what was journaled since in the same pass
    (every writer imports the journal before it writes)."""
    import threading

    from guardrails.ledger import spool as spooled

    path = tmp_path / "ledger.db"
    work, held = _committed_not_removed(path)
    Path(work).write_text("".join(_journal_lines(path, 1, start=3)))
    tried = threading.Event()
    real = spooled._flock
    attempts: list[int] = []

    def flock(fd: int, how: int) -> None:
        if threading.current_thread().name == "B":
            attempts.append(how)
            if len(attempts) == 3:  # B is waiting (it gave up at the first before)
                tried.set()
        real(fd, how)

    monkeypatch.setattr(spooled, "_flock", flock)
    monkeypatch.setattr(spooled, "_LEFT_WAIT", 5.0)  # "briefly", on a loaded machine too
    b = threading.Thread(target=import_pending, args=(str(path),), name="B")
    b.start()
    try:
        assert tried.wait(10)
    finally:
        held.finish()
        b.join(10)
    monkeypatch.undo()
    assert not journal.waiting(str(path))  # B took c3 in that pass
    ids = sorted(r["tool_call_id"] for r in rows(path, "SELECT tool_call_id FROM tool_calls"))
    assert ids == ["c0", "c1", "c2", "c3"]


def test_a_line_torn_before_a_record_does_not_swallow_it(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    """A short write (a full disk, a crash mid-append) leaves a line without its newline.
    The next process's record, appended after it, was read as part of that line and
    rejected with it: every record starts on a line of its own."""
    path = tmp_path / "ledger.db"
    _ready(path)
    with open(journal_path(str(path)), "ab") as fh:
        fh.write(b'{"v": 1, "ops": [["pre", [1, 2')  # what the short write left
    _hook_process(path, definition, _pre("rm -rf a", "t1"))
    assert [c[0] for c in _calls(path)] == ["t1"]
    rejected = Path(journal_path(str(path)) + ".rejected").read_text().splitlines()
    assert len(rejected) == 1 and "not JSON" in json.loads(rejected[0])["reason"]


def test_a_line_that_cannot_be_imported_is_rejected_with_why(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    _ready(path)
    good = _journal_lines(path, 2)
    work = journal_path(str(path))
    Path(work).write_text(good[0] + '{"v": 1, "ops": [["pre", [1, 2' + "\n" + good[1])
    import sqlite3

    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert import_journal(conn, str(path)) == (2, 1)
    finally:
        conn.close()
    rejected = [json.loads(x) for x in Path(work + ".rejected").read_text().splitlines()]
    assert len(rejected) == 1
    assert rejected[0]["reason"].startswith("not JSON")
    assert rejected[0]["record"].startswith('{"v": 1, "ops": [["pre"')
    assert len(_calls(path)) == 2


def test_a_journal_that_cannot_be_written_takes_the_store(
    tmp_path: Path, definition: AgentDefinition
) -> None:
    path = tmp_path / "ledger.db"
    _ready(path)
    Path(journal_path(str(path))).mkdir()  # not a file: the append fails
    ledger = _hook_process(path, definition, _pre("rm -rf x", "t1"))
    assert ledger.journaled == 0
    assert value_of(path) == 1


def value_of(path: Path) -> int:
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM tool_calls").fetchone()[0])
    finally:
        conn.close()


def test_a_writer_looks_for_a_journal_at_most_once_a_millisecond(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-lived writer's look before each write is two stat calls: the Poll asks once per
    interval, and a journal that appeared meanwhile is found at the next look."""
    clock = [100.0]
    monkeypatch.setattr(journal.time, "monotonic", lambda: clock[0])
    path = str(tmp_path / "ledger.db")
    poll = journal.Poll(path)
    assert poll() is False  # nothing waits
    Path(journal.journal_path(path)).write_text("{}\n")
    assert poll() is False  # asked again within the interval: not looked
    clock[0] += journal._POLL_SECONDS
    assert poll() is True


def test_a_marker_that_cannot_be_looked_at_sends_the_gate_to_the_store(
    tmp_path: Path, definition: AgentDefinition, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A halt marker this process may not stat (a folder of another user, mode 0700) is not
    "no marker": the gate takes the store, which knows whether the session is halted."""
    path = tmp_path / "ledger.db"
    _ready(path)
    _hook_process(path, definition, _pre("halt", "t1"))
    real_stat = journal.os.stat

    def stat(target: Any, *args: Any, **kwargs: Any) -> Any:
        if str(target).startswith(halts_folder(str(path)) + "/"):
            raise PermissionError(13, "Permission denied", str(target))
        return real_stat(target, *args, **kwargs)

    monkeypatch.setattr(journal.os, "stat", stat)
    assert _hook_process(path, definition, _pre("ls", "t2")).journaled == 0
    assert _calls(path)[-1] == ("t2", "deny", "denied")


def test_a_halt_whose_marker_cannot_be_made_is_committed_and_journals_no_gate(
    tmp_path: Path, definition: AgentDefinition, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, the whole halt was spooled (the file was writable) and the next hook
    process, seeing no marker, journaled the halted session's call as allowed."""
    from guardrails.ledger import journal_import

    path = tmp_path / "ledger.db"
    _ready(path)

    def cannot(path: str, session_id: str, agent: str) -> None:
        raise IsADirectoryError(21, "Is a directory", "marker")

    monkeypatch.setattr(journal_import, "mark_halted", cannot)
    _hook_process(path, definition, _pre("halt", "t1"))
    assert _calls(path)[-1] == ("t1", "deny", "denied")  # committed, not spooled
    monkeypatch.undo()
    later = _hook_process(path, definition, _pre("ls", "t2"))
    assert later.journaled == 0
    assert _calls(path)[-1] == ("t2", "deny", "denied")
