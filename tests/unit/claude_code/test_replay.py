"""``hookrails replay``: a recorded Claude Code transcript through a definition, no tool run.

Fixtures live in tests/fixtures/transcripts/: ``realistic/`` is a main transcript and
its subagent (with the ``.meta.json`` sidecar) in CLI 2.1.332's shapes; the other
files each carry one kind of real-world mess.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Session
from guardrails.claude_code.replay import ReplayReport, replay_transcript
from guardrails.cli.main import cli
from guardrails.errors import LedgerError, TranscriptError
from guardrails.testing import RecordingHook
from tests._paths import FIXTURES_DIR

FIX = FIXTURES_DIR / "transcripts"
AGENT = FIX / "replay_agent.yaml"
SESSION = "4f6c2a1e-8b3d-4c5e-9a7f-1d2e3f4a5b6c"
REALISTIC = FIX / "realistic" / f"{SESSION}.jsonl"
SUBAGENT = FIX / "realistic" / SESSION / "subagents" / "agent-a7f3c91e.jsonl"


def _replay(name: str | Path, definition: Any = AGENT, **kw: Any) -> ReplayReport:
    path = name if isinstance(name, Path) else FIX / name
    return replay_transcript(path, definition, **kw)


def _recording() -> tuple[AgentDefinition, RecordingHook]:
    """A definition whose one hook records every tool event and has no opinion."""
    rec = RecordingHook()
    hooks = {e: [HookMatcher(hooks=[rec])] for e in ("PreToolUse", "PostToolUse")}
    hooks["PostToolUseFailure"] = [HookMatcher(hooks=[rec])]
    return AgentDefinition(name="recorder", hooks=hooks), rec


def _copy_realistic(tmp_path: Path, cwd: Path | None = None, meta: bool = True) -> Path:
    """The realistic pair under tmp_path, its cwd (and every path under it) moved to ``cwd``."""
    dest = tmp_path / "transcripts"
    shutil.copytree(FIX / "realistic", dest)
    if cwd is not None:
        for f in dest.rglob("*.jsonl"):
            f.write_text(f.read_text().replace("/home/user/proj", str(cwd)))
    if not meta:
        next(dest.rglob("*.meta.json")).unlink()
    return dest / REALISTIC.name


def _rows(db: Path, sql: str) -> list[dict[str, Any]]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql)]
    finally:
        conn.close()


# --- the realistic session -------------------------------------------------------------

REALISTIC_CALLS = [
    # tool_use_id, decision, agent_id, agent type, original status, post event
    ("toolu_01WriteHello", "allow", None, None, "ok", "PostToolUse"),
    ("toolu_02BashRun", "allow", None, None, "ok", "PostToolUse"),
    ("toolu_03AgentLook", "allow", None, None, "ok", "PostToolUse"),
    ("toolu_S1ReadReadme", "allow", "a7f3c91e", "Explore", "ok", "PostToolUse"),
    ("toolu_S2BashClean", "ask", "a7f3c91e", "Explore", "ok", "PostToolUse"),
    ("toolu_S3BashInstall", "deny", "a7f3c91e", "Explore", "ok", None),
    ("toolu_04BashPush", "deny", None, None, "denied", None),
    ("toolu_05WriteReport", "allow", None, None, "ok", "PostToolUse"),
    ("toolu_06ReadHello", "allow", None, None, "ok", "PostToolUse"),
]


def test_realistic_session_replays_every_call_in_order_with_its_decision() -> None:
    report = _replay(REALISTIC)
    got = [
        (
            c.tool_use_id,
            c.decision,
            c.agent_id,
            c.agent_type,
            c.original.status,
            c.post and c.post.event_name,
        )
        for c in report.calls
    ]
    assert got == REALISTIC_CALLS
    assert report.session_id == SESSION and report.cwd == "/home/user/proj"
    assert [f.agent_id for f in report.files] == [None, "a7f3c91e"]
    assert report.files[1].parent_tool_use_id == "toolu_03AgentLook"
    assert report.warnings == []


def test_realistic_session_reports_reasons_rewrites_and_nudges() -> None:
    calls = {c.tool_use_id: c for c in _replay(REALISTIC).calls}
    assert calls["toolu_04BashPush"].pre.reason == (
        "force-push is not allowed\nOpen a pull request instead."
    )
    assert calls["toolu_04BashPush"].original.reason == (
        "force-push is not allowed\nOpen a pull request instead."
    )
    assert calls["toolu_02BashRun"].rewritten_input == {
        "command": "timeout 60 python3 hello.py",
        "description": "Run the script",
    }
    assert calls["toolu_02BashRun"].original.context == ["hello.py has no tests yet."]
    assert [t for _, _, t in calls["toolu_06ReadHello"].contexts] == [
        "Files under docs/ are generated; edit the sources."
    ]
    assert calls["toolu_S2BashClean"].pre.reason == "deleting files needs a human"


def test_summary_counts_per_tool_and_in_total() -> None:
    s = _replay(REALISTIC).summary()
    assert {k: s[k] for k in ("calls", "allowed", "denied", "asked", "rewritten", "nudged")} == {
        "calls": 9,
        "allowed": 6,
        "denied": 2,
        "asked": 1,
        "rewritten": 1,
        "nudged": 2,
    }
    assert s["by_tool"]["Bash"] == {
        "calls": 4,
        "allowed": 1,
        "denied": 2,
        "asked": 1,
        "rewritten": 1,
        "nudged": 0,
    }
    assert s["denied_originally"] == 1 and s["missing_results"] == 0


def test_subagent_type_comes_from_the_agent_result_without_a_sidecar(tmp_path: Path) -> None:
    report = _replay(_copy_realistic(tmp_path, meta=False))
    sub = [c for c in report.calls if c.agent_id == "a7f3c91e"]
    assert len(sub) == 3 and {c.agent_type for c in sub} == {"Explore"}
    assert report.files[1].parent_tool_use_id == "toolu_03AgentLook"


def test_events_carry_the_transcripts_session_cwd_and_agent() -> None:
    definition, rec = _recording()
    _replay(REALISTIC, definition)
    pre = [e for e in rec.events if e.event_name == "PreToolUse"]
    assert {e.session_id for e in rec.events} == {SESSION}
    assert {e.cwd for e in rec.events} == {"/home/user/proj"}
    assert {e.transcript_path for e in rec.events} == {str(REALISTIC)}
    sub = next(e for e in pre if e.tool_use_id == "toolu_S2BashClean")
    assert (sub.agent_id, sub.agent_type) == ("a7f3c91e", "Explore")
    assert pre[0].tool_input == {
        "file_path": "/home/user/proj/hello.py",
        "content": "print('hello')\n",
    }


def test_events_follow_the_records_subagent_merged_in_by_time() -> None:
    definition, rec = _recording()
    _replay(REALISTIC, definition)
    seq = [(e.event_name[:5], e.tool_use_id) for e in rec.events]
    agent_pre = seq.index(("PreTo", "toolu_03AgentLook"))
    agent_post = seq.index(("PostT", "toolu_03AgentLook"))
    inside = {tid for _, tid in seq[agent_pre + 1 : agent_post]}
    assert inside == {"toolu_S1ReadReadme", "toolu_S2BashClean", "toolu_S3BashInstall"}
    # the original session denied the push: the recorder (no opinion) lets it through, but
    # the call never ran there, so there is no post event for it
    assert ("PostT", "toolu_04BashPush") not in seq and ("PreTo", "toolu_04BashPush") in seq


def test_post_event_carries_the_recorded_tool_response() -> None:
    definition, rec = _recording()
    _replay(REALISTIC, definition)
    posts = {e.tool_use_id: e for e in rec.events if e.event_name == "PostToolUse"}
    assert posts["toolu_02BashRun"].tool_response["stdout"] == "hello"
    assert posts["toolu_01WriteHello"].tool_response["type"] == "create"
    assert posts["toolu_06ReadHello"].tool_response["file"]["content"] == "print('hello')\n"


# --- no tool executes ----------------------------------------------------------------------


def test_no_tool_executes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes, deletes and shell commands in the transcript leave the project untouched."""
    proj = tmp_path / "proj"
    (proj / "build").mkdir(parents=True)
    (proj / "build" / "keep.txt").write_text("still here")

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("replay must never run a tool")

    for owner in (Session, Guard):
        monkeypatch.setattr(owner, "run_tool", refuse)
        monkeypatch.setattr(owner, "run_tool_sync", refuse)
    definition, rec = _recording()
    report = _replay(_copy_realistic(tmp_path, cwd=proj), definition)
    assert len(report.calls) == 9 and len(rec.events) == 17  # 9 pre + 8 post
    assert sorted(p.relative_to(proj).as_posix() for p in proj.rglob("*")) == [
        "build",
        "build/keep.txt",
    ]


# --- real-world mess: one fixture each ------------------------------------------------------

MESS = [
    # fixture, calls (tool_use_id, decision, original status), warnings (line, fragment)
    ("unknown_types.jsonl", [("toolu_U1Ls", "allow", "ok")], []),
    (
        "truncated_last_line.jsonl",
        [("toolu_T1Status", "allow", "ok"), ("toolu_T2Build", "allow", "missing")],
        [(5, "truncated last line")],
    ),
    (
        "parallel_calls.jsonl",
        [
            ("toolu_P1Ls", "allow", "ok"),
            ("toolu_P2Read", "allow", "ok"),
            ("toolu_P3Date", "allow", "ok"),
            ("toolu_P4Who", "allow", "ok"),
        ],
        [],
    ),
    (
        "missing_result.jsonl",
        [("toolu_M1Test", "allow", "error"), ("toolu_M2Build", "allow", "missing")],
        [],
    ),
    (
        "hook_denied.jsonl",
        [
            ("toolu_D1Push", "deny", "denied"),
            ("toolu_D2Clean", "ask", "denied"),
            ("toolu_D3Env", "allow", "rejected"),
        ],
        [],
    ),
    ("blank_lines.jsonl", [("toolu_B1Pwd", "allow", "ok")], []),
    (
        "bad_line.jsonl",
        [("toolu_X1Lines", "allow", "ok"), ("toolu_X2Words", "allow", "ok")],
        [(4, "not JSON"), (6, "a JSON array, not a record")],
    ),
    (
        "out_of_order.jsonl",
        [("toolu_O1Log", "allow", "ok")],
        [
            (2, "comes before its tool_use"),
            (4, "tool_use toolu_O1Log repeated"),
            (5, "toolu_O9Ghost has no tool_use"),
        ],
    ),
]


@pytest.mark.parametrize(("fixture", "calls", "warnings"), MESS, ids=[m[0] for m in MESS])
def test_messy_transcripts_replay_what_they_can(
    fixture: str, calls: list[tuple[str, str, str]], warnings: list[tuple[int, str]]
) -> None:
    report = _replay(fixture)
    assert [(c.tool_use_id, c.decision, c.original.status) for c in report.calls] == calls
    assert len(report.warnings) == len(warnings)
    for w, (line, fragment) in zip(report.warnings, warnings, strict=True):
        assert (w.file, w.line) == (str(FIX / fixture), line) and fragment in w.message


SID = "bbbbbbbb-0000-4000-8000-000000000002"


def _rec(kind: str, n: int, **fields: Any) -> dict[str, Any]:
    """A transcript record of ``kind`` at second ``n`` of a session in /p."""
    ts = f"2026-02-01T19:00:{n:02d}.000Z"
    return {"type": kind, "sessionId": SID, "cwd": "/p", "uuid": f"u{n}", "timestamp": ts, **fields}


def _use(n: int, tid: str, tool_input: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": tid, "name": "Bash", "input": tool_input}
    return _rec("assistant", n, message={"id": f"m{n}", "role": "assistant", "content": [block]})


def _result(n: int, tid: str, stdout: str) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tid, "content": stdout, "is_error": False}
    return _rec(
        "user",
        n,
        message={"role": "user", "content": [block]},
        toolUseResult={"stdout": stdout, "stderr": "", "interrupted": False},
    )


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"x": value}
    return value


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply to read; skipped"),
        (json.dumps(_use(3, "toolu_deep", _nested(600))), "nested more than 100 levels deep"),
    ],
    ids=["too deep to parse", "too deep to replay"],
)
def test_a_deeply_nested_line_is_a_warning_with_its_line(
    tmp_path: Path, line: str, message: str
) -> None:
    path = _write(
        tmp_path / f"{SID}.jsonl",
        [_use(1, "toolu_A", {"command": "ls"}), _result(2, "toolu_A", "a"), line,
         _use(4, "toolu_B", {"command": "pwd"})],
    )  # fmt: skip
    code, out, err = _cli(str(path), "-c", str(AGENT), "--all")
    assert code == 0, err
    assert len(err.splitlines()) == 1 and err.startswith(f"warning: {path}:3: {message}"), err
    assert "Bash(ls)" in out and "Bash(pwd)" in out  # the replay went on


def test_a_tool_use_id_repeated_with_another_input_is_replayed_as_its_own_call(
    tmp_path: Path,
) -> None:
    path = _write(
        tmp_path / f"{SID}.jsonl",
        [
            _use(1, "toolu_R", {"command": "ls"}),
            _result(2, "toolu_R", "first"),
            _use(3, "toolu_R", {"command": "rm -rf build"}),  # the same id, another call
            _use(4, "toolu_R", {"command": "ls"}),  # the first call logged again
            _result(5, "toolu_R", "second"),
        ],
    )
    db = tmp_path / "out.db"
    definition, rec = _recording()
    report = _replay(path, definition, ledger=db)
    assert [(c.tool_use_id, c.tool_input["command"]) for c in report.calls] == [
        ("toolu_R", "ls"),
        ("toolu_R#2", "rm -rf build"),
    ]
    second = report.calls[1]
    assert second.notes == [
        f"tool_use id toolu_R repeated with a different input (first at {path.name}:1); "
        "replayed as a call of its own, toolu_R#2"
    ]
    assert second.as_dict()["notes"][0] == second.notes[0]
    posts = {
        e.tool_use_id: e.tool_response["stdout"]
        for e in rec.events
        if e.event_name == "PostToolUse"
    }
    assert posts == {"toolu_R": "first", "toolu_R#2": "second"}  # results pair in order
    assert [(w.line, w.message.split(";")[0]) for w in report.warnings] == [
        (3, "tool_use id toolu_R repeated with a different input (first at "
            f"{path.name}:1)"),
        (4, f"tool_use toolu_R repeated (first at {path.name}:1)"),
    ]  # fmt: skip
    rows = _rows(db, "SELECT tool_call_id, status FROM tool_calls ORDER BY id")
    assert [(r["tool_call_id"], r["status"]) for r in rows] == [
        ("toolu_R", "ok"),
        ("toolu_R#2", "ok"),
    ]
    assert "note: tool_use id toolu_R repeated" in "\n".join(report.lines())


def test_unknown_record_types_are_counted_and_skipped() -> None:
    types = _replay("unknown_types.jsonl").record_types
    for kind in ("api-request", "api-request-blob", "tools-used", "cost-state", "atis-latch"):
        assert types[kind] == 1
    assert types["holographic-projection"] == 1 and types["(no type)"] == 1


def test_parallel_results_pair_with_their_calls_by_id() -> None:
    definition, rec = _recording()
    _replay("parallel_calls.jsonl", definition)
    seq = [(e.event_name, e.tool_use_id) for e in rec.events]
    assert seq[:4] == [
        ("PreToolUse", "toolu_P1Ls"),
        ("PreToolUse", "toolu_P2Read"),
        ("PostToolUse", "toolu_P2Read"),
        ("PostToolUse", "toolu_P1Ls"),
    ]
    posts = {e.tool_use_id: e.tool_response for e in rec.events if e.event_name == "PostToolUse"}
    assert posts["toolu_P1Ls"]["stdout"] == "a.txt"
    assert posts["toolu_P2Read"]["file"]["content"] == "alpha\n"
    # two results in one record: toolUseResult is ambiguous, each gets its own content
    assert posts["toolu_P3Date"] == "Sun Feb  1 11:00:02 UTC 2026"
    assert posts["toolu_P4Who"] == "user"


def test_a_call_without_result_gets_pre_only_and_an_error_gets_the_failure_event() -> None:
    definition, rec = _recording()
    report = _replay("missing_result.jsonl", definition)
    assert [(e.event_name, e.tool_use_id) for e in rec.events] == [
        ("PreToolUse", "toolu_M1Test"),
        ("PostToolUseFailure", "toolu_M1Test"),
        ("PreToolUse", "toolu_M2Build"),
    ]
    assert rec.events[1].error == "Exit code 1\n1 failing"
    assert report.summary()["missing_results"] == 1


def test_calls_denied_in_the_original_session_show_that_reason_and_ours() -> None:
    calls = {c.tool_use_id: c for c in _replay("hook_denied.jsonl").calls}
    assert calls["toolu_D1Push"].original.reason == "force-push is not allowed"
    # a command hook's "[command]: " prefix is dropped
    assert calls["toolu_D2Clean"].original.reason == "blocked by command hook: no rm -rf"
    assert calls["toolu_D2Clean"].pre.reason == "deleting files needs a human"
    assert all(c.post is None for c in calls.values())  # none of them ran there


def test_a_halt_ends_at_the_next_prompt(tmp_path: Path) -> None:
    """A user prompt in the transcript starts a turn: the halt of the last one is over."""
    sid = "aaaaaaaa-0000-4000-8000-000000000001"

    def rec(kind: str, n: int, **fields: Any) -> dict[str, Any]:
        ts = f"2026-02-01T18:00:{n:02d}.000Z"
        return {
            "type": kind,
            "sessionId": sid,
            "cwd": "/p",
            "uuid": f"u{n}",
            "timestamp": ts,
            **fields,
        }

    def use(n: int, command: str) -> dict[str, Any]:
        block = {
            "type": "tool_use",
            "id": f"toolu_H{n}",
            "name": "Bash",
            "input": {"command": command},
        }
        return rec("assistant", n, message={"id": f"m{n}", "role": "assistant", "content": [block]})

    def prompt(n: int) -> dict[str, Any]:
        return rec("user", n, message={"role": "user", "content": "go on"})

    records = [prompt(1), use(2, "halt now"), use(3, "ls"), prompt(4), use(5, "ls")]
    path = tmp_path / f"{sid}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))

    def halt(event: Any, ctx: Any) -> HookResult:
        return HookResult.halt("stop everything")

    definition = AgentDefinition(
        name="halter", hooks={"PreToolUse": [HookMatcher(matcher="Bash(halt*)", hooks=[halt])]}
    )
    report = _replay(path, definition)
    assert [(c.decision, c.halted) for c in report.calls] == [
        ("deny", True),
        ("deny", True),  # the same turn: halted
        ("allow", False),  # a new prompt: a new turn
    ]


# --- the ledger ------------------------------------------------------------------------------


def test_hooks_reading_the_ledger_see_the_replayed_history() -> None:
    """deploy_after_tests denies `make deploy` until the ledger holds a passing `make test`."""
    report = _replay("deploy_after_tests.jsonl")
    assert [(c.tool_use_id, c.decision) for c in report.calls] == [
        ("toolu_E1Deploy", "deny"),
        ("toolu_E2Test", "allow"),
        ("toolu_E3Deploy", "allow"),
    ]
    assert report.ledger is None


def test_without_a_ledger_option_no_ledger_is_left_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not $HOOKRAILS_LEDGER, not the definition's `ledger:`, not .hookrails/; the
    temporary one is removed."""
    defs = tmp_path / "defs"
    defs.mkdir()
    for name in ("replay_agent.yaml", "replay_hooks.py"):
        shutil.copy(FIX / name, defs / name)
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("HOOKRAILS_LEDGER", str(tmp_path / "env.db"))
    monkeypatch.chdir(tmp_path)
    report = _replay("deploy_after_tests.jsonl", defs / "replay_agent.yaml")
    assert report.calls[0].decision == "deny" and report.calls[2].decision == "allow"
    assert not (tmp_path / "env.db").exists()
    assert not (defs / "never-written.db").exists()
    assert not (tmp_path / ".hookrails").exists()
    assert list(temp.iterdir()) == []


def test_ledger_option_records_the_replay_marked_as_replayed(tmp_path: Path) -> None:
    db = tmp_path / "out.db"
    report = _replay(REALISTIC, ledger=db)
    assert report.ledger == str(db)
    rows = {r["tool_call_id"]: r for r in _rows(db, "SELECT * FROM tool_calls ORDER BY id")}
    assert len(rows) == 9
    assert {r["session_id"] for r in rows.values()} == {SESSION}
    statuses = {tid: (r["decision"], r["status"]) for tid, r in rows.items()}
    assert statuses["toolu_S3BashInstall"] == ("deny", "denied")
    assert statuses["toolu_S2BashClean"] == ("ask", "ok")
    assert statuses["toolu_04BashPush"] == ("deny", "denied")
    assert statuses["toolu_01WriteHello"] == ("allow", "ok")
    hello = rows["toolu_01WriteHello"]
    assert json.loads(hello["annotations"])["replayed"] == {"transcript": str(REALISTIC), "line": 4}
    sub = rows["toolu_S1ReadReadme"]
    assert json.loads(sub["annotations"])["replayed"] == {"transcript": str(SUBAGENT), "line": 2}
    assert (sub["agent_id"], sub["agent_type"]) == ("a7f3c91e", "Explore")
    # times are the transcript's
    assert (hello["started_at"], hello["finished_at"]) == (
        "2026-01-31T12:00:01.500Z",
        "2026-01-31T12:00:01.700Z",
    )


def test_calls_that_did_not_run_are_finished_interrupted_in_the_ledger(tmp_path: Path) -> None:
    db = tmp_path / "out.db"
    _replay("missing_result.jsonl", ledger=db)
    _replay("hook_denied.jsonl", ledger=db)
    rows = {
        r["tool_call_id"]: (r["status"], r["error_message"])
        for r in _rows(db, "SELECT tool_call_id, status, error_message FROM tool_calls")
    }
    assert rows["toolu_M1Test"][0] == "error"
    assert rows["toolu_M2Build"] == (
        "interrupted",
        "replay: the transcript has no result for this call",
    )
    assert rows["toolu_D1Push"][0] == "denied"  # ours denied it too
    assert rows["toolu_D2Clean"][0] == "interrupted"
    assert "did not run in the original session (denied" in rows["toolu_D2Clean"][1]
    assert rows["toolu_D3Env"][0] == "interrupted"


def test_a_ledger_that_already_holds_the_session_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "out.db"
    _replay(REALISTIC, ledger=db)
    with pytest.raises(LedgerError, match=f"already holds session {SESSION}"):
        _replay(REALISTIC, ledger=db)
    assert len(_rows(db, "SELECT id FROM tool_calls")) == 9  # untouched


# --- errors that stop the replay ---------------------------------------------------------


def test_transcript_errors_name_the_file_and_line(tmp_path: Path) -> None:
    cases: list[tuple[Path, str, int | None]] = [
        (tmp_path / "nope.jsonl", "no such file", None),
        (tmp_path, "is a directory", None),
        (AGENT, "not a Claude Code transcript: not JSON", 1),
    ]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    cases.append((empty, "empty: not a Claude Code transcript", None))
    other = tmp_path / "events.jsonl"
    other.write_text('\n{"level": "info", "msg": "started"}\n')
    cases.append((other, "no transcript record type ((no type))", 2))
    for path, fragment, line in cases:
        with pytest.raises(TranscriptError) as err:
            _replay(path)
        assert (err.value.file, err.value.line) == (str(path), line)
        assert fragment in str(err.value)


# --- the command -----------------------------------------------------------------------------


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["replay", *args])
    return result.exit_code, result.stdout, result.stderr


def test_cli_prints_notable_calls_and_the_summary_table() -> None:
    code, out, err = _cli(str(REALISTIC), "--config", str(AGENT))
    assert code == 0 and err == ""
    lines = out.splitlines()
    deny = lines.index(
        "deny   Bash(git push --force origin main)  [4f6c2a1e-8b3d-4c5e-9a7f-1d2e3f4a5b6c.jsonl:12]"
    )
    assert lines[deny + 1 : deny + 5] == [
        "       reason: force-push is not allowed",
        "               Open a pull request instead.",
        "       originally: denied by a hook: force-push is not allowed",
        "                   Open a pull request instead.",
    ]
    assert "ask    Bash(rm -rf build)  [agent-a7f3c91e.jsonl:4, agent a7f3c91e (Explore)]" in lines
    assert "Write(/home/user/proj/hello.py)" not in out  # a plain allow is not listed
    assert lines[-3:] == [
        "total            9       6      2     1         1      2",
        "denied by a hook in the original session: 1 (denied here too: 1)",
        "ledger: temporary (removed after)",
    ]


def test_cli_all_lists_every_call() -> None:
    code, out, _ = _cli(str(REALISTIC), "-c", str(AGENT), "--all")
    assert code == 0
    assert sum(line.startswith(("allow ", "deny ", "ask ")) for line in out.splitlines()) == 9


def test_cli_json_is_one_document_of_the_documented_shape() -> None:
    code, out, _ = _cli(str(REALISTIC), "-c", str(AGENT), "--json")
    doc = json.loads(out)
    assert code == 0
    assert list(doc) == [
        "version", "transcript", "session_id", "cwd", "agent", "ledger", "files",
        "record_types", "calls", "summary", "warnings",
    ]  # fmt: skip
    assert doc["version"] == 1 and doc["session_id"] == SESSION and doc["ledger"] is None
    assert doc["summary"]["calls"] == 9 and doc["summary"]["by_tool"]["Read"]["nudged"] == 2
    push = next(c for c in doc["calls"] if c["tool_use_id"] == "toolu_04BashPush")
    assert set(push) == {
        "index", "tool_use_id", "tool_name", "tool_input", "agent_id", "agent_type", "file",
        "line", "timestamp", "decision", "reason", "halted", "rewritten_input",
        "rewritten_output", "context", "feedback", "post_event", "original", "hooks", "notes",
    }  # fmt: skip
    assert (push["decision"], push["post_event"], push["line"]) == ("deny", None, 12)
    assert push["original"]["status"] == "denied"
    assert push["hooks"][0]["hook"] == "deny" and push["hooks"][0]["outcome"] == "deny"
    run = next(c for c in doc["calls"] if c["tool_use_id"] == "toolu_02BashRun")
    assert run["rewritten_input"]["command"] == "timeout 60 python3 hello.py"


FAIL_ON = [
    # options, fixture, exit code
    ((), REALISTIC, 0),
    (("--fail-on", "deny"), REALISTIC, 3),
    (("--fail-on", "deny"), FIX / "blank_lines.jsonl", 0),
    (("--fail-on", "ask"), FIX / "hook_denied.jsonl", 3),
    (("--fail-on", "rewrite"), FIX / "parallel_calls.jsonl", 0),
    (("--fail-on", "nudge"), FIX / "parallel_calls.jsonl", 3),
    (("--fail-on", "ask", "--fail-on", "rewrite"), REALISTIC, 3),
    (("--fail-on", "deny", "--json"), FIX / "deploy_after_tests.jsonl", 3),
]


@pytest.mark.parametrize(("options", "fixture", "code"), FAIL_ON)
def test_cli_fail_on_sets_the_exit_code(options: tuple[str, ...], fixture: Path, code: int) -> None:
    got, out, _ = _cli(str(fixture), "-c", str(AGENT), *options)
    assert got == code and out  # the report is printed either way


def test_cli_warnings_go_to_stderr_with_file_and_line() -> None:
    code, out, err = _cli(str(FIX / "bad_line.jsonl"), "-c", str(AGENT), "--json")
    assert code == 0 and json.loads(out)["warnings"][0]["line"] == 4
    assert err.splitlines() == [
        f"warning: {FIX / 'bad_line.jsonl'}:4: not JSON (Expecting value); skipped",
        f"warning: {FIX / 'bad_line.jsonl'}:6: a JSON array, not a record; skipped",
    ]


def test_cli_errors_are_one_line_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: x\nhooks:\n  PreToolUse:\n    - matcher: 'Bash(git push'\n      hooks: [deny]\n"
    )
    cases = [
        ((str(tmp_path / "nope.jsonl"), "-c", str(AGENT)), f"{tmp_path / 'nope.jsonl'}: no such"),
        ((str(AGENT), "-c", str(AGENT)), f"{AGENT}:1: not a Claude Code transcript"),
        ((str(REALISTIC), "-c", str(bad)), f"{bad}:4: hooks.PreToolUse[0].matcher"),
        ((str(REALISTIC), "-c", str(tmp_path / "none.yaml")), f"{tmp_path / 'none.yaml'}: file"),
    ]
    for args, start in cases:
        code, out, err = _cli(*args)
        assert (code, out) == (1, "")
        assert len(err.splitlines()) == 1 and err.startswith(f"error: {start}"), err


def test_cli_ledger_option_and_a_second_replay_into_it(tmp_path: Path) -> None:
    db = tmp_path / "out.db"
    code, out, _ = _cli(str(REALISTIC), "-c", str(AGENT), "--ledger", str(db))
    assert code == 0 and out.splitlines()[-1] == f"ledger: {db}"
    code, _, err = _cli(str(REALISTIC), "-c", str(AGENT), "--ledger", str(db))
    assert code == 1 and f"already holds session {SESSION}" in err


def test_output_is_redacted(tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    path = tmp_path / "secret.jsonl"
    text = (FIX / "hook_denied.jsonl").read_text()
    path.write_text(
        text.replace(
            "git push --force origin main", f"git push --force https://{token}@github.com/o/r"
        )
    )
    for options in ((), ("--json",)):
        code, out, _ = _cli(str(path), "-c", str(AGENT), *options)
        assert code == 0 and "git push --force" in out and token not in out


# --- lone surrogates (issue #10 §3): JSON.stringify writes them, json.loads keeps them ------

LONE = "\ud800"


def _lone_transcript(tmp_path: Path) -> Path:
    use = json.dumps(_use(1, "toolu_L", {"command": f"echo {LONE}"}))
    result = json.dumps(_result(2, "toolu_L", f"out {LONE}"))
    assert "\\ud800" in use and "\\ud800" in result  # as Claude Code writes them
    later = [_use(3, "toolu_M", {"command": "ls"}), _result(4, "toolu_M", "a")]
    return _write(tmp_path / f"{SID}.jsonl", [use, result, *later])


def test_a_lone_surrogate_is_replayed_recorded_and_printed(tmp_path: Path) -> None:
    """Before: the ledger could not store it and the report could not be printed, so the
    replay stopped with an error at the first such call."""
    path = _lone_transcript(tmp_path)
    db = tmp_path / "replay.db"
    code, out, err = _cli(str(path), "-c", str(AGENT), "--all", "--ledger", str(db))
    assert code == 0, err
    assert "Bash(echo \\ud800)" in out and "Bash(ls)" in out
    calls = _rows(db, "SELECT tool_call_id, status, tool_call_arguments, tool_call_result "
                  "FROM tool_calls ORDER BY id")  # fmt: skip
    assert [(c["tool_call_id"], c["status"]) for c in calls] == [
        ("toolu_L", "ok"),
        ("toolu_M", "ok"),
    ]
    assert json.loads(calls[0]["tool_call_arguments"]) == {"command": f"echo {LONE}"}
    assert json.loads(calls[0]["tool_call_result"])["stdout"] == f"out {LONE}"
    assert not list(tmp_path.glob("*.spool.jsonl"))


def test_the_json_report_keeps_a_lone_surrogate_as_its_escape(tmp_path: Path) -> None:
    code, out, err = _cli(str(_lone_transcript(tmp_path)), "-c", str(AGENT), "--json")
    assert code == 0, err
    out.encode("utf-8")  # printable
    doc = json.loads(out)
    assert doc["calls"][0]["tool_input"] == {"command": f"echo {LONE}"}  # the same string
    assert "\\ud800" in out
