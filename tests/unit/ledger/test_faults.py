"""The ledger loses nothing (docs/design.md §7, issue #10 §3): bad strings, bad spool records,
a newer schema, and values over the size caps each end in a recorded row or a spooled record
that a later ``recover`` takes.

Spooling is forced with ``PRAGMA query_only`` on the ledger's own connection (every write
fails as on a read-only file) and undone before ``recover``. The file deleted or replaced
under a writer is in ``test_moved.py``; what needs other processes is in
``tests/processes/test_ledger_faults.py``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guardrails import (
    AgentDefinition,
    Guard,
    HookMatcher,
    HookResult,
    Ledger,
    LedgerError,
    PreToolUse,
)
from guardrails._canonical_json import canonical_hash
from guardrails.ledger.migrations import Migration, migrations
from guardrails.ledger.records import _bound
from tests._db import records, rows, value

LATEST = len(migrations())
SURROGATE = "\ud800"  # what JSON.stringify writes as "\ud800" for a lone high surrogate
LOW = "\udfff"


def _spooled(ledger: Ledger) -> Any:
    """While inside, every write of ``ledger`` fails and goes to the spool."""

    @contextmanager
    def spooling() -> Iterator[None]:
        assert ledger._conn is not None
        ledger._conn.execute("PRAGMA query_only = ON")
        try:
            yield
        finally:
            assert ledger._conn is not None
            ledger._conn.execute("PRAGMA query_only = OFF")

    return spooling()


def _spool_lines(ledger: Ledger) -> list[str]:
    text = Path(ledger.spool_path).read_text(encoding="utf-8")
    return [x for x in text.splitlines(keepends=True) if x.strip()]  # each after a blank


def _calls(db: str) -> dict[str, dict[str, Any]]:
    return {r["tool_call_id"]: r for r in rows(db, "SELECT * FROM tool_calls")}


def _valid(guard: Guard, n: int, prefix: str = "ok") -> list[str]:
    """``n`` plain guarded calls; their ids."""
    ids = [f"toolu_{prefix}_{i}" for i in range(n)]
    for i, call_id in enumerate(ids):
        assert guard.sync.run_tool("echo", {"i": i}, lambda i: i, tool_use_id=call_id).ok
    return ids


# --- lone surrogates: stored, never spooled, and read back the same ------------------------

#: (id, tool input, tool output): each holds a lone surrogate somewhere JSON.stringify can
#: put one, and must be stored as JSON that reads back to the same value
SURROGATE_VALUES: list[tuple[str, Any, Any]] = [
    ("input-string", {"command": f"echo {SURROGATE}"}, "ok"),
    ("input-nested", {"a": [{"b": f"x{LOW}y"}], "n": 1}, "ok"),
    ("input-key", {f"k{SURROGATE}": "v"}, "ok"),
    ("output-string", {"command": "cat"}, f"bytes {SURROGATE} and {LOW} end"),
    ("output-nested", {"command": "cat"}, {"lines": [SURROGATE, "é", "😀"]}),
    ("both-and-a-pair-of-lones", {"t": LOW + SURROGATE}, [LOW + SURROGATE]),
]


@pytest.mark.parametrize(
    ("id_", "tool_input", "output"), SURROGATE_VALUES, ids=[c[0] for c in SURROGATE_VALUES]
)
def test_a_lone_surrogate_is_stored_as_json_that_reads_back_the_same(
    ledger_path: str, id_: str, tool_input: Any, output: Any
) -> None:
    with Ledger(ledger_path) as ledger:
        run = Guard(AgentDefinition(), ledger=ledger).sync.run_tool(
            "cat", tool_input, lambda **kw: output, tool_use_id="toolu_s"
        )
        assert run.ok and run.output == output
        assert ledger.degraded is None  # written to the file, not spooled
    assert not os.path.exists(ledger_path + ".spool.jsonl")
    row = rows(
        ledger_path,
        "SELECT tool_call_arguments AS a, final_arguments AS f, tool_call_result AS r, "
        "json_valid(tool_call_arguments) AS va, json_valid(tool_call_result) AS vr, "
        "arguments_hash FROM tool_calls",
    )[0]
    assert (row["va"], row["vr"]) == (1, 1)  # json_extract() works on them
    assert json.loads(row["a"]) == tool_input and json.loads(row["f"]) == tool_input
    assert json.loads(row["r"]) == output
    assert row["arguments_hash"] == canonical_hash(tool_input)


def test_a_high_and_a_low_surrogate_side_by_side_read_back_as_their_character(
    ledger_path: str,
) -> None:
    """The one case the JSON text cannot keep apart (docs/ledger.md): in JSON, ``\\ud800``
    then ``\\udfff`` is the character they encode. ``json.loads`` never makes such a pair,
    so a recorded Claude Code event never holds one."""
    with Ledger(ledger_path) as ledger:
        Guard(AgentDefinition(), ledger=ledger).sync.run_tool(
            "cat", {"t": SURROGATE + LOW}, lambda t: "ok"
        )
    stored = value(ledger_path, "SELECT tool_call_arguments FROM tool_calls")
    assert stored == '{"t": "\\ud800\\udfff"}'
    assert json.loads(stored) == {"t": "\U000103ff"}


def test_json_extract_reaches_a_value_beside_a_lone_surrogate(ledger_path: str) -> None:
    with Ledger(ledger_path) as ledger:
        Guard(AgentDefinition(), ledger=ledger).sync.run_tool(
            "cat", {"path": f"a{SURROGATE}", "n": 7}, lambda **kw: "x"
        )
    assert (
        value(ledger_path, "SELECT json_extract(tool_call_arguments, '$.n') FROM tool_calls") == 7
    )
    assert value(
        ledger_path, "SELECT json_type(tool_call_arguments, '$.path') FROM tool_calls"
    ) == ("text")


def test_lone_surrogates_in_text_columns_are_stored_as_escapes(ledger_path: str) -> None:
    """Reasons, errors and payloads: each recorded (never spooled); text columns hold the
    ``\\ud800`` escape, JSON columns the same JSON string."""

    def deny(event: Any, ctx: Any) -> HookResult:
        return HookResult.deny(f"no {event.tool_input['path']}")

    def boom(event: Any, ctx: Any) -> None:
        raise RuntimeError(f"hook saw {SURROGATE}")

    definition = AgentDefinition(
        hooks={
            "PreToolUse": [
                HookMatcher(matcher="rm", hooks=[deny]),
                HookMatcher(matcher="ls", hooks=[boom], on_failure="continue"),
            ],
            "UserPromptSubmit": [HookMatcher(hooks=[lambda e, c: None])],
        }
    )

    def failing(**kw: Any) -> None:
        raise ValueError(f"tool saw {LOW}")

    with Ledger(ledger_path) as ledger:
        s = Guard(definition, ledger=ledger).session(f"session-{SURROGATE}")
        assert s.sync.run_tool("rm", {"path": f"x{SURROGATE}"}, failing).denied
        assert s.sync.run_tool("ls", {}, failing).status == "error"
        assert s.sync.user_prompt_submit(f"prompt {SURROGATE} here").allowed
        assert ledger.degraded is None
    assert not os.path.exists(ledger_path + ".spool.jsonl")
    calls = rows(ledger_path, "SELECT tool_name, reason, error_message, session_id FROM tool_calls")
    by_tool = {c["tool_name"]: c for c in calls}
    assert by_tool["rm"]["reason"] == "no x\\ud800"
    assert by_tool["ls"]["error_message"] == "tool saw \\udfff"
    assert {c["session_id"] for c in calls} == {"session-\\ud800"}
    assert value(ledger_path, "SELECT error FROM hook_runs WHERE outcome = 'error'") == (
        "RuntimeError: hook saw \\ud800"
    )
    payload = value(ledger_path, "SELECT payload FROM events")
    assert json.loads(payload)["prompt"] == f"prompt {SURROGATE} here"


def test_spooled_records_with_lone_surrogates_are_imported_with_the_rest(
    ledger_path: str,
) -> None:
    """Before: the record could never be imported (UnicodeEncodeError), recover stopped with
    the spool stuck as ``.importing`` and the 20 valid records behind it blocked."""
    ledger = Ledger(ledger_path)
    try:
        guard = Guard(AgentDefinition(), ledger=ledger)
        with _spooled(ledger):
            guard.sync.run_tool(
                "cat", {"p": SURROGATE}, lambda p: f"{LOW}!", tool_use_id="toolu_bad"
            )
            ids = _valid(guard, 20)
        assert len(_spool_lines(ledger)) == 42
        report = ledger.recover()
    finally:
        ledger.close()
    assert (report.imported, report.rejected) == (42, 0)
    calls = _calls(ledger_path)
    assert set(calls) == {"toolu_bad", *ids}
    assert {c["status"] for c in calls.values()} == {"ok"}
    assert json.loads(calls["toolu_bad"]["tool_call_arguments"]) == {"p": SURROGATE}
    assert json.loads(calls["toolu_bad"]["tool_call_result"]) == f"{LOW}!"
    assert not Path(ledger_path + ".spool.jsonl.importing").exists()


def test_an_importing_file_left_behind_is_resumed_with_the_new_spool(ledger_path: str) -> None:
    """A recover that stopped (a crash, or before this fix the surrogate) left
    ``<spool>.importing``; the next recover imports it and what was spooled since."""
    ledger = Ledger(ledger_path)
    try:
        guard = Guard(AgentDefinition(), ledger=ledger)
        with _spooled(ledger):
            guard.sync.run_tool("cat", {"p": SURROGATE}, lambda p: p, tool_use_id="toolu_bad")
            first = _valid(guard, 5, "first")
        spool = ledger.spool_path
        os.replace(spool, spool + ".importing")
        with _spooled(ledger):
            later = _valid(guard, 5, "later")
        report = ledger.recover()
    finally:
        ledger.close()
    assert (report.imported, report.rejected) == (22, 0)
    assert set(_calls(ledger_path)) == {"toolu_bad", *first, *later}
    assert not os.path.exists(spool) and not os.path.exists(spool + ".importing")


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_a_recover_that_gets_the_lock_before_the_last_one_removed_its_file_imports_none_twice(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Recover A committed the spool it took; recover B gets the ledger's lock before A
    removed ``<spool>.importing``: B takes nothing, at once (it imported every record a
    second time, or failed on the file removed under it), and what was spooled since
    waits for the next recover."""
    from guardrails.ledger import spool as spooled

    source = Ledger(tmp_path / "source.db")
    try:
        noop = HookMatcher(hooks=[lambda e, c: None])
        guard = Guard(AgentDefinition(hooks={"PreToolUse": [noop]}), ledger=source)
        with _spooled(source):
            ids = _valid(guard, 3)
            later = _valid(guard, 1, "later")
        lines = _spool_lines(source)
    finally:
        source.close()
    first, since = lines[: 2 * len(ids)], lines[2 * len(ids) :]
    runs = "SELECT count(*) FROM hook_runs"
    where = str(tmp_path / "ledger.db")
    if engine == "postgres":
        where = request.getfixturevalue("postgres_url")
    with Ledger(where) as ledger:
        spool = ledger.spool_path
        Path(spool).write_text("".join(first), "utf-8")
        assert ledger.recover().imported == len(first)  # A's COMMIT
        once = value(where, runs)
        Path(spool).write_text("".join(first), "utf-8")
        held = spooled.take(spool)  # A, between its COMMIT and its removal
        Path(spool).write_text("".join(since), "utf-8")
        try:
            assert ledger.recover().imported == 0  # B
        finally:
            held.finish()
        assert not os.path.exists(spool + ".importing")
        assert ledger.recover().imported == len(since)  # the next one
    assert sorted(_calls(where)) == sorted(ids + later)
    assert value(where, runs) == once + len(later)


def test_a_failed_take_leaves_no_lock_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Appending the new spool to a file a stopped import left fails (a full disk): the
    file is not left locked, so the next import takes it and the spool at once."""
    import errno

    from guardrails.ledger import spool as spooled

    spool = str(tmp_path / "s.jsonl")
    Path(spool + ".importing").write_text("one\n", "utf-8")
    Path(spool).write_text("two\n", "utf-8")

    def full(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "a" in mode:
            raise OSError(errno.ENOSPC, "No space left on device")
        return open(path, mode, *args, **kwargs)

    monkeypatch.setattr(spooled, "open", full, raising=False)
    with pytest.raises(OSError, match="No space") as failed:  # kept, as a caller may
        spooled.take(spool)
    monkeypatch.undo()
    again = spooled.take(spool)
    assert failed.value is not None
    assert again.held and again.lines == ["one\n", "\n", "two\n"]
    again.finish()
    assert not spooled.waiting(spool)


def test_an_import_waits_a_bounded_time_for_a_writer_that_stopped_mid_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer that opened the spool before the import renamed it, and stopped there
    (holding its shared lock): the import fails after a while, naming the file, instead of
    holding the ledger's lock for ever; the next one takes the lines."""
    import fcntl

    from guardrails.ledger import spool as spooled

    spool = str(tmp_path / "s.jsonl")
    Path(spool).write_text("one\n", "utf-8")
    writer = os.open(spool, os.O_WRONLY | os.O_APPEND)
    fcntl.flock(writer, fcntl.LOCK_SH)
    monkeypatch.setattr(spooled, "_HELD_WAIT", 0.05)
    try:
        with pytest.raises(OSError, match=r"a writer has held .*s\.jsonl\.importing"):
            spooled.take(spool)
    finally:
        os.close(writer)
    again = spooled.take(spool)
    assert again.lines == ["one\n"]
    again.finish()
    assert not spooled.waiting(spool)


def test_a_writer_that_opened_the_spool_before_an_import_took_it_does_not_wait_for_it(
    tmp_path: Path,
) -> None:
    """A writer opened the spool, then an import renamed and locked it (and holds it for
    its whole transaction): the writer sees the file moved and appends to a new spool at
    once, instead of waiting for the import to end."""
    import threading

    from guardrails.ledger import journal
    from guardrails.ledger import spool as spooled

    spool = str(tmp_path / "s.jsonl")
    Path(spool).write_text("one\n", "utf-8")
    early = os.open(spool, os.O_WRONLY | os.O_APPEND)
    held = spooled.take(spool)
    try:
        answers: list[bool] = []
        writer = threading.Thread(target=lambda: answers.append(journal._share(early, spool)))
        writer.start()
        writer.join(5)
        assert answers == [False]  # moved: it goes to the file now at the path
        assert journal.append_line(spool, b"two\n") == 4
    finally:
        os.close(early)
        held.finish()
    assert Path(spool).read_text("utf-8") == "two\n"


def test_without_flock_the_file_taken_is_closed_so_it_can_be_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where there is no ``flock`` (Windows), an open file cannot be removed: the taken
    file is read and closed at once, so the removal after the COMMIT works and the next
    import takes nothing twice."""
    from guardrails.ledger import spool as spooled

    opened: list[Any] = []
    real_remove = os.remove

    def tracked(path: Any, *args: Any, **kwargs: Any) -> Any:
        fh = open(path, *args, **kwargs)  # noqa: SIM115  # the test looks at it
        opened.append((os.fspath(path), fh))
        return fh

    def windows_remove(path: Any) -> None:
        if any(p == os.fspath(path) and not fh.closed for p, fh in opened):
            raise PermissionError(13, "The process cannot access the file")
        real_remove(path)

    monkeypatch.setattr(spooled, "_flock", None)
    monkeypatch.setattr(spooled, "open", tracked, raising=False)
    monkeypatch.setattr(spooled.os, "remove", windows_remove)
    spool = str(tmp_path / "s.jsonl")
    Path(spool).write_text("one\n", "utf-8")
    taken = spooled.take(spool)
    assert taken.held and taken.lines == ["one\n"]
    taken.finish()
    assert not spooled.waiting(spool)


# --- every spool record on its own -----------------------------------------------------------


def _edit(op: str, change: Callable[[list[Any]], list[Any]]) -> Callable[[str], str]:
    """A spool line edited: the first ``op`` operation's parameters changed."""

    def edit(line: str) -> str:
        entry = json.loads(line)
        for pair in entry["ops"]:
            if pair[0] == op:
                pair[1] = change(pair[1])
                break
        else:
            raise AssertionError(f"no {op} in {line}")
        return json.dumps(entry) + "\n"

    return edit


def _set(index: int, new: Any) -> Callable[[list[Any]], list[Any]]:
    def change(params: list[Any]) -> list[Any]:
        params[index] = new
        return params

    return change


#: (id, how the bad record is made from a good spool line of a denied call, a word of the
#: reason kept with it in <spool>.rejected)
BAD_RECORDS: list[tuple[str, Callable[[str], str], str]] = [
    ("torn-by-a-crash", lambda line: line[: len(line) // 2] + "\n", "not JSON"),
    ("not-json", lambda line: "\x00\x01 garbage\n", "not JSON"),
    ("json-but-no-ops", lambda line: '{"v": 1}\n', "no ops"),
    ("a-newer-format", lambda line: line.replace('"v": 1', '"v": 99'), "spool format 99"),
    ("unknown-operation", lambda line: line.replace('"pre"', '"drop_everything"'), "unknown"),
    ("not-an-operation", lambda line: '{"v": 1, "ops": ["pre"]}\n', "not an operation"),
    ("check-constraint", _edit("pre", _set(9, "maybe")), "IntegrityError"),
    ("not-null", _edit("pre", _set(5, None)), "IntegrityError"),
    ("too-few-parameters", _edit("pre", lambda p: p[:3]), "ProgrammingError"),
    ("unbindable-value", _edit("pre", _set(6, {"a": 1})), "ProgrammingError"),
    ("integer-too-big", _edit("pre", _set(15, 2**70)), "OverflowError"),
]


@pytest.mark.parametrize(
    ("id_", "make_bad", "reason"), BAD_RECORDS, ids=[c[0] for c in BAD_RECORDS]
)
def test_one_bad_spool_record_is_rejected_with_why_and_never_blocks_the_rest(
    ledger_path: str, id_: str, make_bad: Callable[[str], str], reason: str
) -> None:
    definition = AgentDefinition(
        hooks={
            "PreToolUse": [HookMatcher(matcher="rm", hooks=[lambda e, c: HookResult.deny("no")])]
        }
    )
    ledger = Ledger(ledger_path)
    try:
        guard = Guard(definition, ledger=ledger)
        with _spooled(ledger):
            before = _valid(guard, 10, "before")
            guard.sync.run_tool("rm", {"path": "/"}, lambda path: None, tool_use_id="toolu_rm")
            after = _valid(guard, 10, "after")
        lines = _spool_lines(ledger)
        assert len(lines) == 41
        bad = make_bad(lines[20])  # the denied call's one record, between the others
        Path(ledger.spool_path).write_text("".join([*lines[:20], bad, *lines[21:]]), "utf-8")
        report = ledger.recover()
    finally:
        ledger.close()
    assert (report.imported, report.rejected) == (40, 1)
    calls = _calls(ledger_path)
    assert set(calls) == {*before, *after}
    assert {c["status"] for c in calls.values()} == {"ok"}
    kept = [
        json.loads(x) for x in Path(ledger_path + ".spool.jsonl.rejected").read_text().splitlines()
    ]
    assert len(kept) == 1
    assert kept[0]["record"] == bad.rstrip("\n")
    assert reason in kept[0]["reason"], kept[0]["reason"]
    assert not Path(ledger_path + ".spool.jsonl.importing").exists()


def test_recover_that_fails_on_the_file_keeps_the_whole_spool(ledger_path: str) -> None:
    """A failure of the file (here: locked), not of a record: nothing is committed,
    nothing rejected, the spool waits for the next recover."""
    ledger = Ledger(ledger_path, busy_timeout=0.05)
    try:
        guard = Guard(AgentDefinition(), ledger=ledger)
        with _spooled(ledger):
            ids = _valid(guard, 3)
        other = sqlite3.connect(ledger_path, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(LedgerError, match="run recover again"):
                ledger.recover()
        finally:
            other.close()
        assert ledger._conn is not None and not ledger._conn.in_transaction
        assert not os.path.exists(ledger.spool_path + ".rejected")
        report = ledger.recover()
    finally:
        ledger.close()
    assert (report.imported, report.rejected) == (6, 0)
    assert set(_calls(ledger_path)) == set(ids)


# --- a newer schema: never written, every record spooled, said once ------------------------

FUTURE = Migration(LATEST + 1, "future", "ALTER TABLE tool_calls ADD COLUMN future TEXT;\n")


@contextmanager
def _newer_hookrails(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Inside, this process is a newer hookrails: it knows one more migration."""
    with monkeypatch.context() as patch:
        patch.setattr("guardrails.ledger.migrations.migrations", lambda: [*migrations(), FUTURE])
        patch.setattr("guardrails.ledger.migrations.latest_version", lambda: LATEST + 1)
        yield


def test_a_newer_schema_spools_every_record_for_a_newer_recover(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: the Ledger raised, a Guard refused to start, a hook process recorded nothing."""
    with _newer_hookrails(monkeypatch):
        Ledger(ledger_path).close()  # a newer hookrails made the file
    assert value(ledger_path, "PRAGMA user_version") == LATEST + 1
    prompts = AgentDefinition(hooks={"UserPromptSubmit": [HookMatcher(hooks=[lambda e, c: None])]})
    ids: list[str] = []
    with caplog.at_level(logging.WARNING, logger="guardrails.ledger"):
        for n in range(3):  # three Ledgers in one process: a hook process, a server...
            with Ledger(ledger_path) as ledger:
                assert ledger.degraded is not None and ledger.degraded.startswith("newer_schema")
                guard = Guard(prompts, ledger=ledger)
                ids += _valid(guard, 3, f"l{n}")
                assert guard.sync.user_prompt_submit(f"prompt {n}").allowed
    said = [r.getMessage() for r in caplog.records if "newer" in r.getMessage()]
    assert len(said) == 1, said  # once per process, not per event nor per Ledger
    assert f"schema version {LATEST + 1}" in said[0] and "spool" in said[0]
    assert value(ledger_path, "SELECT count(*) FROM tool_calls") == 0  # never written
    with _newer_hookrails(monkeypatch), Ledger(ledger_path) as newer:
        report = newer.recover()
    assert (report.imported, report.rejected) == (21, 0)
    assert set(_calls(ledger_path)) == set(ids)
    assert value(ledger_path, "SELECT count(*) FROM events") == 3


def test_this_hookrails_refuses_to_recover_into_a_newer_schema(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _newer_hookrails(monkeypatch):
        Ledger(ledger_path).close()
    with Ledger(ledger_path) as ledger:
        _valid(Guard(AgentDefinition(), ledger=ledger), 1)
        with pytest.raises(LedgerError) as info:
            ledger.recover()
    assert info.value.kind == "newer_schema"
    assert "newer hookrails" in str(info.value)
    assert ledger_path + ".spool.jsonl" in str(info.value)  # where the records wait
    assert len(records(ledger_path + ".spool.jsonl")) == 2


# --- size caps: arguments like results ---------------------------------------------------------


def _marker(stored: str, whole: Any, cap: int) -> dict[str, Any]:
    marker = json.loads(stored)
    assert set(marker) == {"_truncated", "size", "sha256", "head"}
    data = json.dumps(whole, ensure_ascii=False).encode("utf-8", "surrogatepass")
    assert marker["_truncated"] is True
    assert marker["size"] == len(data)
    assert marker["sha256"] == hashlib.sha256(data).hexdigest()
    head = json.dumps(marker["head"], ensure_ascii=False)
    assert len(head.encode("utf-8", "surrogatepass")) - 2 <= cap
    return marker


def test_a_big_input_is_capped_and_its_hash_stays_the_whole_inputs(ledger_path: str) -> None:
    """Before: a 1 MB input made a 2 MB row (arguments as sent and as run)."""
    big = {"file_path": "/tmp/x", "content": "0123456789abcdef" * 65_536}  # 1 MiB
    with Ledger(ledger_path) as ledger:
        assert ledger.max_arguments == 64 * 1024
        run = Guard(AgentDefinition(), ledger=ledger).sync.run_tool(
            "Write", big, lambda **kw: "written"
        )
        assert run.ok and run.tool_input == big  # the tool got all of it
    row = rows(
        ledger_path,
        "SELECT tool_call_arguments AS a, final_arguments AS f, arguments_hash AS h, "
        "length(tool_call_arguments) + length(final_arguments) AS stored FROM tool_calls",
    )[0]
    assert row["stored"] < 2 * (64 * 1024 + 300)
    for column in ("a", "f"):
        marker = _marker(row[column], big, 64 * 1024)
        assert marker["head"].startswith('{"file_path": "/tmp/x", "content": "0123')
    assert row["h"] == canonical_hash(big)  # repeated-call and idempotency checks see it all


def test_the_argument_cap_is_configurable_and_an_input_at_the_cap_is_whole(
    ledger_path: str,
) -> None:
    at_cap = {"t": "a" * (256 - len('{"t": ""}'))}  # 256 bytes of JSON
    over = {"t": "a" * 300}
    with Ledger(ledger_path, max_arguments=256) as ledger:
        guard = Guard(AgentDefinition(), ledger=ledger)
        guard.sync.run_tool("echo", at_cap, lambda t: "ok", tool_use_id="toolu_at")
        guard.sync.run_tool("echo", over, lambda t: "ok", tool_use_id="toolu_over")
    calls = _calls(ledger_path)
    assert json.loads(calls["toolu_at"]["tool_call_arguments"]) == at_cap
    _marker(calls["toolu_over"]["tool_call_arguments"], over, 256)


def test_a_rewritten_input_and_annotations_are_capped_too(ledger_path: str) -> None:
    def rewrite(event: Any, ctx: Any) -> HookResult:
        return HookResult(updated_input={"t": "b" * 5000}, annotations={"note": "n" * 5000})

    definition = AgentDefinition(hooks={"PreToolUse": [HookMatcher(hooks=[rewrite])]})
    with Ledger(ledger_path, max_arguments=1024) as ledger:
        Guard(definition, ledger=ledger).sync.run_tool("echo", {"t": "a"}, lambda t: "ok")
    row = rows(
        ledger_path, "SELECT tool_call_arguments, final_arguments, annotations FROM tool_calls"
    )
    assert json.loads(row[0]["tool_call_arguments"]) == {"t": "a"}
    _marker(row[0]["final_arguments"], {"t": "b" * 5000}, 1024)
    assert json.loads(row[0]["annotations"])["_truncated"] is True


def test_a_secret_in_the_head_of_a_capped_input_is_masked(ledger_path: str) -> None:
    secret = "ghp_" + "Q7" * 20
    big = {"command": f"git push https://x:{secret}@github.com/o/r " + "y" * 200_000}
    with Ledger(ledger_path) as ledger:
        Guard(AgentDefinition(), ledger=ledger).sync.run_tool("Bash", big, lambda command: "")
    stored = value(ledger_path, "SELECT tool_call_arguments FROM tool_calls")
    assert secret not in stored and secret[:12] not in stored
    assert "[REDACTED:" in json.loads(stored)["head"]


def test_a_big_prompt_payload_is_capped(ledger_path: str) -> None:
    prompt = "z" * 200_000
    with Ledger(ledger_path, max_output=4096) as ledger:
        Guard(AgentDefinition(), ledger=ledger).sync.user_prompt_submit(prompt)
    payload = json.loads(value(ledger_path, "SELECT payload FROM events"))
    assert payload["_truncated"] is True and payload["size"] > 200_000
    assert len(payload["head"]) <= 4096


def test_a_capped_value_with_a_lone_surrogate_in_its_head_is_stored(ledger_path: str) -> None:
    big = {"t": SURROGATE + "x" * 100_000}
    with Ledger(ledger_path) as ledger:
        Guard(AgentDefinition(), ledger=ledger).sync.run_tool("echo", big, lambda t: "ok")
        assert ledger.degraded is None
    marker = _marker(value(ledger_path, "SELECT tool_call_arguments FROM tool_calls"), big, 65536)
    assert marker["head"].startswith('{"t": "' + SURROGATE)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@pytest.mark.slow  # hypothesis, 300 examples
@settings(max_examples=300, deadline=None)
@given(value_=JSON_VALUES, cap=st.integers(min_value=0, max_value=400))
def test_the_quick_size_bound_never_lets_a_value_over_the_cap_through(
    value_: Any, cap: int
) -> None:
    """``_bound`` decides whether a value is measured before it is stored: a value it
    calls small must be, in UTF-8 JSON bytes."""
    if _bound(value_, cap, 0) >= 0:
        text = json.dumps(value_, ensure_ascii=False)
        assert len(text.encode("utf-8", "surrogatepass")) <= cap


SECRETISH = st.sampled_from(
    ["ls", "sk-ant-" + "a" * 40, "password", "Bearer abc.def", "ApiKey", "token_count", "ok"]
)
SECRET_VALUES = st.recursive(
    st.none() | st.integers() | st.text(max_size=8) | SECRETISH,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6) | SECRETISH, inner, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.slow  # hypothesis, 300 examples
@settings(max_examples=300, deadline=None)
@given(value_=SECRET_VALUES)
def test_the_unwalked_json_of_a_value_equals_its_redacted_json(value_: Any) -> None:
    """The hot path encodes a plain value without walking it when its JSON text holds no
    trigger word: what it stores equals redacting first, then encoding (frozen event values
    included)."""
    from guardrails._frozen import freeze
    from guardrails._redaction import Redactor
    from guardrails.ledger.records import EventRows

    rows = EventRows(Redactor(()), 64 * 1024, 64 * 1024)
    slow = json.dumps(Redactor(()).redact(value_), ensure_ascii=False, allow_nan=False)
    assert rows._json(value_, 64 * 1024)[0] == slow
    assert rows._json(freeze(value_), 64 * 1024)[0] == slow


def test_a_value_nested_deeper_than_the_redactor_walks_is_still_masked_there() -> None:
    from guardrails._redaction import MAX_DEPTH, Redactor
    from guardrails.ledger.records import EventRows

    deep: Any = "leaf"
    for _ in range(MAX_DEPTH + 2):
        deep = [deep]
    text = EventRows(Redactor(()), 64 * 1024, 64 * 1024)._json(deep, 64 * 1024)[0]
    assert text == json.dumps(Redactor(()).redact(deep), ensure_ascii=False)
    assert "leaf" not in text


def test_pre_tool_use_of_another_process_finds_its_capped_arguments(ledger_path: str) -> None:
    """The host flow: the post event (another process) finishes the row the pre wrote."""
    big = {"content": "c" * 100_000}
    common = {"session_id": "s", "cwd": "/", "tool_use_id": "toolu_host", "tool_name": "Write"}
    with Ledger(ledger_path) as first:
        Guard(AgentDefinition(), ledger=first).emit_sync(PreToolUse(tool_input=big, **common))
    from guardrails import PostToolUse

    with Ledger(ledger_path) as second:
        Guard(AgentDefinition(), ledger=second).emit_sync(
            PostToolUse(tool_input=big, tool_response="ok", **common)
        )
    row = rows(ledger_path, "SELECT status, tool_call_arguments, arguments_hash FROM tool_calls")
    assert len(row) == 1 and row[0]["status"] == "ok"
    _marker(row[0]["tool_call_arguments"], big, 65536)
    assert row[0]["arguments_hash"] == canonical_hash(big)


#: what PostgreSQL's import keeps as the reason where it differs from SQLite's (psycopg names
#: the violated rule)
_PG_REASONS = {
    "check-constraint": "CheckViolation",
    "not-null": "NotNullViolation",
    "integer-too-big": "NumericValueOutOfRange",
}


@pytest.mark.parametrize(
    ("id_", "make_bad", "reason"), BAD_RECORDS, ids=[c[0] for c in BAD_RECORDS]
)
def test_the_spool_import_both_engines_share_rejects_one_bad_record_with_why(
    tmp_path: Path, postgres_url: str, id_: str, make_bad: Callable[[str], str], reason: str
) -> None:
    """``spool.import_records``, the import's loop, on each engine: the spool a SQLite
    ledger wrote (the format is the engines'), with one bad record, imported by both."""
    definition = AgentDefinition(
        hooks={
            "PreToolUse": [HookMatcher(matcher="rm", hooks=[lambda e, c: HookResult.deny("no")])]
        }
    )
    source = Ledger(tmp_path / "source.db")
    try:
        guard = Guard(definition, ledger=source)
        with _spooled(source):
            ids = _valid(guard, 2, "before")
            guard.sync.run_tool("rm", {"path": "/"}, lambda path: None, tool_use_id="toolu_rm")
            ids += _valid(guard, 2, "after")
        lines = _spool_lines(source)
    finally:
        source.close()
    assert len(lines) == 9
    bad = make_bad(lines[4])
    for engine, where in (("sqlite", str(tmp_path / "ledger.db")), ("postgres", postgres_url)):
        with Ledger(where) as ledger:
            spool = Path(ledger.spool_path)  # PostgreSQL's: in the temp folder
            try:
                spool.write_text("".join([*lines[:4], bad, *lines[5:]]), "utf-8")
                report = ledger.recover()
                kept = [json.loads(x) for x in Path(f"{spool}.rejected").read_text().splitlines()]
            finally:
                for leftover in spool.parent.glob(spool.name + "*"):
                    leftover.unlink()
        assert (report.imported, report.rejected) == (8, 1), engine
        assert set(_calls(where)) == set(ids), engine
        assert len(kept) == 1 and kept[0]["record"] == bad.rstrip("\n"), engine
        want = _PG_REASONS.get(id_, reason) if engine == "postgres" else reason
        assert want in kept[0]["reason"], (engine, kept[0]["reason"])
