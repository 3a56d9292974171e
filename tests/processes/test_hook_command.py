"""``hookrails hook``: one Claude Code hook event on stdin, answered by the command protocol.

Every answer comes from a real subprocess, through both ways Claude Code can
run it: ``python -m guardrails hook`` and the installed ``hookrails`` script.
Exit 0 carries the decision's JSON; exit 2 (one stderr line) fails closed;
exit 1 (one stderr line) fails open. A PreToolUse that cannot be decided is
never allowed: every crash we can inject is tried. Children get a bytecode
cache in a temporary folder, like an installed package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from guardrails.claude_code import hook_command as _hookcmd
from guardrails.definition import cache as _defcache
from guardrails.definition.model import DEFAULT_ON_FAILURE, AgentDefinition
from tests._db import rows, value
from tests._paths import REPO

pytestmark = pytest.mark.slow  # every test but three runs `hookrails hook` processes

ROOT = REPO
PAYLOADS = ROOT / "tests" / "fixtures" / "claude_payloads"
SCRIPT = Path(sys.executable).parent / ("hookrails.exe" if os.name == "nt" else "hookrails")
RUNNERS = {"module": [sys.executable, "-m", "guardrails"], "script": [str(SCRIPT)]}
BOTH = pytest.mark.parametrize("runner", sorted(RUNNERS))

AGENT = """\
name: tester
hooks:
  PreToolUse:
    - matcher: "Bash(git push --force*)"
      hooks: [{use: deny, with: {reason: "force-push is not allowed"}}]
    - matcher: "Write"
      hooks: [{use: ask, with: {reason: "writes need a human"}}]
  PostToolUse:
    - matcher: "Write"
      hooks: [{use: inject, with: {text: "report written"}}]
  PostToolUseFailure:
    - matcher: "mcp__github__*"
      hooks: [{use: inject, with: {text: "title must be a string"}}]
  UserPromptSubmit:
    - hooks: [events_hooks:no_secrets]
  SubagentStart:
    - matcher: researcher
      hooks: [{use: inject, with: {text: "cite your sources"}}]
  SubagentStop:
    - hooks: [{use: deny, with: {reason: "findings.md is missing"}}]
  Stop:
    - hooks: [events_hooks:require_done]
  SessionStart:
    - hooks: [{use: inject, with: {text: "house rules"}}]
  SessionEnd:
    - hooks: [events_hooks:remember_end]
"""

EVENTS_HOOKS = """\
import os

from guardrails import HookResult


def no_secrets(event, ctx):
    if "password" in event.prompt:
        return HookResult.block("no passwords in prompts")
    return None


def require_done(event, ctx):
    if "DONE" not in (event.last_assistant_message or ""):
        return HookResult.block("say DONE when the report is written")
    return None


def remember_end(event, ctx):
    with open(os.path.join(event.cwd, "ended.txt"), "w") as fh:
        fh.write(event.reason)
"""


def _ctx(text: str, event: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _deny(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


#: (fixture payload, fields changed, the answer on stdout)
EVENT_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("PreToolUse", {}, _deny("force-push is not allowed")),
    ("PreToolUse", {"tool_input": {"command": "ls"}}, {}),
    (
        "PreToolUse",
        {"tool_name": "Write", "tool_input": {"file_path": "/x/a.md", "content": "a"}},
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": "writes need a human",
            }
        },
    ),
    ("PostToolUse", {}, _ctx("report written", "PostToolUse")),
    ("PostToolUseFailure", {}, _ctx("title must be a string", "PostToolUseFailure")),
    (
        "UserPromptSubmit",
        {"prompt": "my password is hunter2"},
        {"decision": "block", "reason": "no passwords in prompts"},
    ),
    ("UserPromptSubmit", {}, {}),
    ("SubagentStart", {}, _ctx("cite your sources", "SubagentStart")),
    ("SubagentStop", {}, {"decision": "block", "reason": "findings.md is missing"}),
    (
        "Stop",
        {"last_assistant_message": "still working"},
        {"decision": "block", "reason": "say DONE when the report is written"},
    ),
    ("Stop", {}, {}),
    ("SessionStart", {}, _ctx("house rules", "SessionStart")),
    ("SessionEnd", {}, {}),
]


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float = 0.0

    @property
    def answer(self) -> Any:
        return json.loads(self.out)

    @property
    def refused(self) -> bool:
        """Claude would not run the tool: exit 2, or exit 0 with a deny."""
        if self.code == 2:
            return True
        if self.code != 0:
            return False
        spec = self.answer.get("hookSpecificOutput", {})
        return bool(spec.get("permissionDecision") == "deny")


@pytest.fixture(scope="session")
def pycache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("pycache"))


def _env(pycache: str, cache: Path, **extra: str) -> dict[str, str]:
    dropped = ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "HOOKRAILS_LEDGER")
    env = {k: v for k, v in os.environ.items() if k not in dropped}  # as Claude Code runs it
    env["PYTHONPYCACHEPREFIX"] = pycache
    env["HOOKRAILS_CACHE_DIR"] = str(cache)
    env.update(extra)
    return env


@pytest.fixture
def env(pycache: str, tmp_path: Path) -> dict[str, str]:
    return _env(pycache, tmp_path / "cache")


def hook(
    runner: str, *args: str, stdin: Any, cwd: Path, env: dict[str, str], timeout: float = 60
) -> Run:
    if isinstance(stdin, dict):
        stdin = json.dumps(stdin)
    data = stdin.encode() if isinstance(stdin, str) else stdin
    t0 = time.monotonic()
    proc = subprocess.run(
        [*RUNNERS[runner], "hook", *args],
        input=data,
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )
    return Run(proc.returncode, proc.stdout.decode(), proc.stderr.decode(), time.monotonic() - t0)


def payload(name: str, cwd: Path | None = None, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PAYLOADS / f"{name}.json").read_text())
    if cwd is not None:
        data["cwd"] = str(cwd)
    data.update(changes)
    return data


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("hookrails: ")
    return lines[0]


# --- every event ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def events_project(tmp_path_factory: pytest.TempPathFactory, pycache: str) -> Path:
    """One definition binding every event; its cache is shared by the module's tests."""
    folder = tmp_path_factory.mktemp("events")
    return write(folder, {"agent.yaml": AGENT, "events_hooks.py": EVENTS_HOOKS})


@BOTH
@pytest.mark.parametrize(
    ("event", "changes", "expected"),
    EVENT_CASES,
    ids=[f"{e}-{i}" for i, (e, _, _) in enumerate(EVENT_CASES)],
)
def test_every_event_is_answered_on_stdout_and_recorded(
    runner: str,
    event: str,
    changes: dict[str, Any],
    expected: dict[str, Any],
    events_project: Path,
    pycache: str,
    tmp_path: Path,
) -> None:
    env = _env(pycache, events_project / "cache")
    ledger = tmp_path / "ledger.db"
    stdin = payload(event, tmp_path, **changes)
    run = hook(
        runner,
        "--config",
        str(events_project / "agent.yaml"),
        "--ledger",
        str(ledger),
        stdin=stdin,
        cwd=tmp_path,
        env=env,
    )
    assert (run.code, run.err) == (0, "")
    assert run.answer == expected
    if event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        recorded = rows(ledger, "select tool_name from tool_calls where tool_call_id = ?",
                        stdin["tool_use_id"])  # fmt: skip
        assert recorded == [{"tool_name": stdin["tool_name"]}]
    else:
        name = "AgentStop" if event == "Stop" else event
        assert value(ledger, "select count(*) from events where event = ?", name) == 1
    if event == "SessionEnd":  # the hook itself ran in the hook process
        assert (tmp_path / "ended.txt").read_text() == "prompt_input_exit"


# --- failures ---------------------------------------------------------------------------

BROKEN_IMPORT = "raise RuntimeError('hooks module is broken')\n"
EXIT_ON_IMPORT = "import sys\nsys.exit(0)\ndef check(e, c):\n    return None\n"


def _project(tmp_path: Path, agent: str, **files: str) -> Path:
    write(tmp_path, {"agent.yaml": agent, **{f"{k}.py": v for k, v in files.items()}})
    return tmp_path / "agent.yaml"


PRE_ONLY = """\
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [{pre_hooks}]
  Stop:
    - hooks: [{{use: inject, with: {{text: "x"}}}}]
      on_failure: {stop_policy}
"""

#: (name, a PreToolUse hook reference, hooks.py text): each must end in a refusal
PRE_CRASHES = [
    ("module raises on import", "broken_hooks:check", BROKEN_IMPORT),
    ("module calls sys.exit(0) on import", "exiting_hooks:check", EXIT_ON_IMPORT),
    ("hook raises", "crash_hooks:check", "def check(event, ctx):\n    raise KeyError('boom')\n"),
    ("hook calls sys.exit(0)", "crash_hooks:check",
     "import sys\ndef check(e, c):\n    sys.exit(0)\n"),
    ("hook raises KeyboardInterrupt", "crash_hooks:check",
     "def check(e, c):\n    raise KeyboardInterrupt\n"),
    ("hook returns nonsense", "crash_hooks:check", "def check(e, c):\n    return 42\n"),
    ("missing function", "crash_hooks:nope", "def check(e, c):\n    return None\n"),
]  # fmt: skip


@BOTH
@pytest.mark.parametrize(
    ("ref", "source"), [c[1:] for c in PRE_CRASHES], ids=[c[0] for c in PRE_CRASHES]
)
def test_a_crashing_pre_tool_use_hook_never_allows(
    runner: str, ref: str, source: str, env: dict[str, str], tmp_path: Path
) -> None:
    module = ref.split(":")[0]
    config = _project(
        tmp_path, PRE_ONLY.format(pre_hooks=ref, stop_policy="continue"), **{module: source}
    )
    stdin = payload("PreToolUse", tmp_path, tool_input={"command": "ls"})
    run = hook(runner, "--config", str(config), "--no-ledger", stdin=stdin, cwd=tmp_path, env=env)
    assert run.refused, run
    if run.code == 2:
        one_line(run.err)


def test_a_missing_schema_file_denies_that_tools_calls_and_no_others(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The hook process does not compile schemas at load (Guard(check=False)): the call that
    needs the missing one fails closed, with the reason; other calls are judged as usual."""
    agent = "tools:\n  send: {schema: missing.json}\nhooks:\n  PreToolUse:\n"
    config = _project(tmp_path, agent + "    - hooks: [schema_guardrail]\n")
    answers = {}
    for tool, tool_input in (("send", {"to": "a"}), ("Bash", {"command": "ls"})):
        stdin = payload("PreToolUse", tmp_path, tool_name=tool, tool_input=tool_input)
        run = hook("module", "--config", str(config), "--no-ledger", stdin=stdin, cwd=tmp_path,
                   env=env)  # fmt: skip
        answers[tool] = run
    assert answers["send"].refused
    assert "schema file 'missing.json' not found" in answers["send"].out
    assert (answers["Bash"].code, answers["Bash"].answer) == (0, {})


NOISY_HOOKS = """\
import os, sys
print("imported")
from guardrails import HookResult
def check(e, c):
    print("checking", e.tool_name)
    sys.__stdout__.write("raw\\n")
    os.system("echo from a shell")
    return HookResult.deny("noisy says no")
"""


@BOTH
def test_what_hooks_print_cannot_garble_the_answer(
    runner: str, env: dict[str, str], tmp_path: Path
) -> None:
    config = _project(
        tmp_path, PRE_ONLY.format(pre_hooks="noisy:check", stop_policy="continue"),
        noisy=NOISY_HOOKS,
    )  # fmt: skip
    stdin = payload("PreToolUse", tmp_path, tool_input={"command": "ls"})
    run = hook(runner, "--config", str(config), "--no-ledger", stdin=stdin, cwd=tmp_path, env=env)
    assert (run.code, run.answer) == (0, _deny("noisy says no"))
    assert sorted(run.err.split()) == ["Bash", "a", "checking", "from", "imported", "raw", "shell"]


#: how the process around the Guard can fail: (name, extra args, stdin, config text or None)
PROCESS_FAILURES: list[tuple[str, list[str], Any, str | None]] = [
    ("garbage stdin", ["--event", "PreToolUse"], "not json {", "hooks: {}\n"),
    ("garbage stdin, no --event", [], b"\xff\xfe", "hooks: {}\n"),
    ("stdin is a list", ["--event", "PreToolUse"], "[1, 2]", "hooks: {}\n"),
    ("no hook_event_name", ["--event", "PreToolUse"], {"tool_name": "Bash"}, "hooks: {}\n"),
    ("payload misses tool_name", [], {"hook_event_name": "PreToolUse", "tool_input": {}}, ""),
    ("missing config", [], None, None),
    ("invalid YAML", [], None, "hooks:\n  PreToolUse: [\n"),
    ("invalid definition", [], None,
     "hooks:\n  PreToolUse:\n    - matcher: 'Bash('\n      hooks: [deny]\n"),
    ("definition nested 5000 deep", [], None, "a: " + "[" * 5000 + "]" * 5000 + "\n"),
    ("billion laughs definition", [], None, "tools: {t: {annotations: {l0: &l0 [lol, lol]\n"
     + "".join(f", l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 10))
     + "}}}\n"),
    ("unknown option", ["--frobnicate"], None, "hooks: {}\n"),
    ("--ledger with --no-ledger", ["--ledger", "x.db", "--no-ledger"], None, "hooks: {}\n"),
]  # fmt: skip


@BOTH
@pytest.mark.parametrize(
    ("args", "stdin", "agent"),
    [c[1:] for c in PROCESS_FAILURES],
    ids=[c[0] for c in PROCESS_FAILURES],
)
def test_an_undecidable_pre_tool_use_fails_closed_with_one_line(
    runner: str, args: list[str], stdin: Any, agent: str | None, env: dict[str, str], tmp_path: Path
) -> None:
    config = tmp_path / "agent.yaml"
    if agent is not None:
        config.write_text(agent)
    if stdin is None:
        stdin = payload("PreToolUse", tmp_path, tool_input={"command": "ls"})
    extra = [] if "--no-ledger" in args else ["--no-ledger"]
    run = hook(runner, "--config", str(config), *extra, *args, stdin=stdin, cwd=tmp_path, env=env)
    assert run.code == 2 and run.out == ""
    line = one_line(run.err)
    assert line.endswith("the tool call is denied") or "fails closed" in line


def test_messages_say_what_is_wrong_and_where(env: dict[str, str], tmp_path: Path) -> None:
    _project(tmp_path, PRE_ONLY.format(pre_hooks="exiting_hooks:check", stop_policy="block"),
             exiting_hooks=EXIT_ON_IMPORT)  # fmt: skip
    stdin = payload("PreToolUse", tmp_path, tool_input={"command": "ls"})
    run = hook("module", "--config", "agent.yaml", stdin=stdin, cwd=tmp_path, env=env)
    assert (run.code, run.out) == (2, "")  # not the module's exit 0 with nothing on stdout
    assert (
        "agent.yaml:4: hooks.PreToolUse[0].hooks[0]: cannot import module 'exiting_hooks'"
        in one_line(run.err)
        and "importing it raised SystemExit(0)" in run.err
    )
    (tmp_path / "agent.yaml").write_text("hooks:\n  PreToolUse: [\n")
    stdin = payload("PreToolUse", tmp_path)
    run = hook("module", "--config", "agent.yaml", stdin=stdin, cwd=tmp_path, env=env)
    line = one_line(run.err)
    assert "cannot load the definition: agent.yaml:3: invalid YAML" in line
    run = hook("module", "--config", "gone.yaml", stdin=stdin, cwd=tmp_path, env=env)
    assert "gone.yaml: file not found" in one_line(run.err)
    run = hook("module", "--config", "agent.yaml", stdin="{", cwd=tmp_path, env=env)
    assert "stdin is not a JSON hook event" in one_line(run.err)


#: (name, event, stdin changes or raw stdin, definition, expected exit code)
POLICY_CASES: list[tuple[str, str, Any, str | None, int]] = [
    ("Stop, matcher continues", "Stop", "garbage", PRE_ONLY.format(
        pre_hooks="deny", stop_policy="continue"), 1),
    ("Stop, matcher blocks", "Stop", "garbage", PRE_ONLY.format(
        pre_hooks="deny", stop_policy="block"), 2),
    ("Stop, broken hooks module, block", "Stop", {}, PRE_ONLY.format(
        pre_hooks="deny", stop_policy="block").replace(
        '{use: inject, with: {text: "x"}}', "broken_hooks:check"), 2),
    ("Stop, broken hooks module, continue", "Stop", {}, PRE_ONLY.format(
        pre_hooks="deny", stop_policy="continue").replace(
        '{use: inject, with: {text: "x"}}', "broken_hooks:check"), 1),
    ("Stop, invalid definition says block", "Stop", {}, PRE_ONLY.format(
        pre_hooks="deny", stop_policy="block") + "bogus: 1\n", 2),
    ("Stop, hooks module exits on import, continue", "Stop", {}, PRE_ONLY.format(
        pre_hooks="deny", stop_policy="continue").replace(
        '{use: inject, with: {text: "x"}}', "exiting_hooks:check"), 1),
    ("SessionStart, missing config", "SessionStart", {}, None, 1),
    ("UserPromptSubmit, missing config", "UserPromptSubmit", {}, None, 2),
    ("PreToolUse, on_failure continue still closes", "PreToolUse", "garbage",
     "hooks:\n  PreToolUse:\n    - hooks: [deny]\n      on_failure: continue\n", 2),
]  # fmt: skip


@BOTH
@pytest.mark.parametrize(
    ("event", "stdin", "agent", "code"),
    [c[1:] for c in POLICY_CASES],
    ids=[c[0] for c in POLICY_CASES],
)
def test_other_events_fail_by_their_matchers_on_failure(
    runner: str,
    event: str,
    stdin: Any,
    agent: str | None,
    code: int,
    env: dict[str, str],
    tmp_path: Path,
) -> None:
    if agent is not None:
        _project(tmp_path, agent, broken_hooks=BROKEN_IMPORT, exiting_hooks=EXIT_ON_IMPORT)
    if isinstance(stdin, dict):
        stdin = payload(event, tmp_path, **stdin)
    args = ["--config", str(tmp_path / "agent.yaml"), "--event", event, "--no-ledger"]
    run = hook(runner, *args, stdin=stdin, cwd=tmp_path, env=env)
    assert (run.code, run.out) == (code, "")
    line = one_line(run.err)
    assert ("fails open" in line) == (code == 1)


@pytest.mark.parametrize("stdin_event", ["pretooluse", "Notification", "PostToolUse"])
def test_stdin_naming_another_event_than_event_fails_by_events_policy(
    stdin_event: str, env: dict[str, str], tmp_path: Path
) -> None:
    """Installed as a PreToolUse hook: whatever stdin claims, an undecidable call is refused."""
    config = _project(tmp_path, PRE_ONLY.format(pre_hooks="allow", stop_policy="continue"))
    stdin = {**payload("PreToolUse", tmp_path), "hook_event_name": stdin_event}
    args = ["--config", str(config), "--event", "PreToolUse", "--no-ledger"]
    run = hook("module", *args, stdin=stdin, cwd=tmp_path, env=env)
    assert (run.code, run.out) == (2, "")
    assert "does not match --event PreToolUse" in one_line(run.err)


@BOTH
def test_an_event_claude_does_not_have_fails_open(
    runner: str, env: dict[str, str], tmp_path: Path
) -> None:
    config = _project(tmp_path, "hooks: {}\n")
    stdin = {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "PreNotification"}
    run = hook(runner, "--config", str(config), stdin=stdin, cwd=tmp_path, env=env)
    assert (run.code, run.out) == (1, "")
    assert "'PreNotification' is not a Claude Code hook event hookrails knows" in one_line(run.err)


@BOTH
def test_a_config_that_vanishes_after_caching_fails_closed(
    runner: str, env: dict[str, str], tmp_path: Path
) -> None:
    config = _project(tmp_path, PRE_ONLY.format(pre_hooks="deny", stop_policy="continue"))
    stdin = payload("PreToolUse", tmp_path)
    first = hook(runner, "--config", str(config), "--no-ledger", stdin=stdin, cwd=tmp_path, env=env)
    assert first.refused and first.code == 0  # denied by the definition, now cached
    config.unlink()
    run = hook(runner, "--config", str(config), "--no-ledger", stdin=stdin, cwd=tmp_path, env=env)
    assert run.code == 2 and "file not found" in one_line(run.err)


@BOTH
def test_a_hook_that_never_returns_is_answered_by_the_watchdog(
    runner: str, env: dict[str, str], tmp_path: Path
) -> None:
    """At the event's deadline: its budget (1 s) + the hook's timeout (1 s) + 1 s of grace."""
    hook_ref = "{use: slow_hooks:check, timeout: 1}"
    agent = "event_budget: 1\n" + PRE_ONLY.format(pre_hooks=hook_ref, stop_policy="block")
    config = _project(
        tmp_path, agent, slow_hooks="import time\ndef check(e, c):\n    time.sleep(60)\n"
    )
    stdin = payload("PreToolUse", tmp_path, tool_input={"command": "ls"})
    run = hook(runner, "--config", str(config), "--no-ledger", stdin=stdin, cwd=tmp_path, env=env)
    assert run.code == 2 and run.seconds < 30
    assert "no decision within 3s (the event's deadline)" in one_line(run.err)


#: a ledger that cannot be written: (name, prepare the path)
BROKEN_LEDGERS = [
    ("a directory", lambda p: p.mkdir()),
    ("garbage bytes", lambda p: p.write_bytes(b"this is not a database" * 100)),
    ("newer schema", None),
]


@BOTH
@pytest.mark.parametrize(
    "prepare", [c[1] for c in BROKEN_LEDGERS], ids=[c[0] for c in BROKEN_LEDGERS]
)
def test_a_broken_ledger_does_not_change_the_decision(
    runner: str, prepare: Any, env: dict[str, str], tmp_path: Path
) -> None:
    config = _project(tmp_path, PRE_ONLY.format(pre_hooks="deny", stop_policy="continue"))
    ledger = tmp_path / "ledger.db"
    if prepare is None:
        import sqlite3

        conn = sqlite3.connect(ledger)
        conn.execute("PRAGMA user_version = 999")
        conn.close()
    else:
        prepare(ledger)
    stdin = payload("PreToolUse", tmp_path, tool_input={"command": "ls"})
    run = hook(runner, "--config", str(config), "--ledger", str(ledger), stdin=stdin, cwd=tmp_path,
               env=env)  # fmt: skip
    assert run.code == 0 and run.refused


def test_a_failure_is_recorded_in_the_ledger(env: dict[str, str], tmp_path: Path) -> None:
    config = _project(
        tmp_path, PRE_ONLY.format(pre_hooks="broken_hooks:check", stop_policy="continue"),
        broken_hooks=BROKEN_IMPORT,
    )  # fmt: skip
    ledger = tmp_path / "ledger.db"
    stdin = payload("PreToolUse", tmp_path, tool_input={"command": "ls"})
    run = hook("module", "--config", str(config), "--ledger", str(ledger), stdin=stdin,
               cwd=tmp_path, env=env)  # fmt: skip
    assert run.code == 2
    [call] = rows(ledger, "select decision, status, reason from tool_calls")
    assert (call["decision"], call["status"]) == ("deny", "denied")
    assert "hooks module is broken" in call["reason"]


@pytest.mark.parametrize(
    "bad", ['float("nan")', 'float("inf")', "object()"], ids=["nan", "inf", "object"]
)
def test_an_answer_json_cannot_hold_is_undecided_never_the_original_input(
    bad: str, env: dict[str, str], tmp_path: Path
) -> None:
    """Claude drops output it cannot parse and runs the original input: refuse instead."""
    rewrite = (
        "from guardrails import HookResult\n"
        "def check(e, c):\n"
        f"    return HookResult.modify(input={{'command': 'ls', 'timeout': {bad}}})\n"
    )
    config = _project(
        tmp_path,
        PRE_ONLY.format(pre_hooks="rewrite_hooks:check", stop_policy="continue"),
        rewrite_hooks=rewrite,
    )
    ledger = tmp_path / "ledger.db"
    stdin = payload("PreToolUse", tmp_path, tool_input={"command": "rm -rf build"})
    run = hook("module", "--config", str(config), "--ledger", str(ledger), stdin=stdin,
               cwd=tmp_path, env=env)  # fmt: skip
    assert (run.code, run.out) == (2, "")
    assert "not valid JSON" in one_line(run.err)
    [call] = rows(ledger, "select status from tool_calls")
    assert call["status"] == "denied"


@pytest.mark.parametrize("event", ["PreToolUse", "UserPromptSubmit", "AgentStop", "SessionStart"])
def test_the_last_resort_policy_is_the_design_default(event: str, tmp_path: Path) -> None:
    """A definition that cannot be read at all: each event fails by docs/design.md §5."""
    state = _hookcmd._State(_hookcmd.parse_args(["--config", str(tmp_path / "missing.yaml")]))
    state.event = event
    expected = event == "PreToolUse" or DEFAULT_ON_FAILURE.get(event) == "block"
    assert _hookcmd._fails_closed(state) is expected


#: (command line, (config, event, ledger, no_ledger) or the error)
ARGS = [
    (["--config", "a.yaml"], ("a.yaml", None, None, False)),
    (["-c", "a.yaml", "-e", "Stop", "-l", "x.db"], ("a.yaml", "Stop", "x.db", False)),
    (["--config=a.yaml", "--event=Stop", "--no-ledger"], ("a.yaml", "Stop", None, True)),
    (["--event", "Stop"], "--config is required"),
    (["--config"], "--config needs a value"),
    (["--config", "a.yaml", "extra"], "unexpected argument 'extra'"),
    (["-c", "a.yaml", "-l", "x.db", "--no-ledger"], "exclude each other"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "expected"), ARGS)
def test_the_command_line_is_read_without_argparse(argv: list[str], expected: Any) -> None:
    if isinstance(expected, str):
        with pytest.raises(ValueError, match=expected):
            _hookcmd.parse_args(argv)
        return
    opts = _hookcmd.parse_args(argv)
    assert (opts.config, opts.event, opts.ledger, opts.no_ledger) == expected


# --- the ledger -------------------------------------------------------------------------


#: (name, --ledger, $HOOKRAILS_LEDGER, definition's ledger:, where the record goes)
LEDGER_ORDER = [
    ("--ledger wins", "explicit.db", "env.db", "defined.db", "explicit.db"),
    ("then the environment", None, "env.db", "defined.db", "env.db"),
    ("then the definition, beside its file", None, None, "defined.db", "conf/defined.db"),
    ("then the default", None, None, None, ".hookrails/ledger.db"),
]


@pytest.mark.parametrize(
    ("flag", "environ", "defined", "where"),
    [c[1:] for c in LEDGER_ORDER],
    ids=[c[0] for c in LEDGER_ORDER],
)
def test_the_ledger_is_chosen_like_everywhere_else(
    flag: str | None,
    environ: str | None,
    defined: str | None,
    where: str,
    pycache: str,
    tmp_path: Path,
) -> None:
    (tmp_path / "conf").mkdir()
    agent = (f"ledger: {defined}\n" if defined else "") + PRE_ONLY.format(
        pre_hooks="deny", stop_policy="continue"
    )
    config = _project(tmp_path / "conf", agent)
    extra = {"HOOKRAILS_LEDGER": str(tmp_path / environ)} if environ else {}
    env = _env(pycache, tmp_path / "cache", **extra)
    args = ["--ledger", str(tmp_path / flag)] if flag else []
    stdin = payload("PreToolUse", tmp_path)
    run = hook("module", "--config", str(config), *args, stdin=stdin, cwd=tmp_path, env=env)
    assert run.code == 0 and run.refused
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.db"))
    assert written == [where]
    assert value(tmp_path / where, "select count(*) from tool_calls") == 1


def test_no_ledger_writes_nothing(env: dict[str, str], tmp_path: Path) -> None:
    config = _project(tmp_path, PRE_ONLY.format(pre_hooks="deny", stop_policy="continue"))
    stdin = payload("PreToolUse", tmp_path)
    run = hook("script", "--config", str(config), "--no-ledger", stdin=stdin, cwd=tmp_path, env=env)
    assert run.refused and not list(tmp_path.rglob("*.db"))


# --- start-up cost ----------------------------------------------------------------------

#: runs the console entry as Claude Code would, then writes sys.modules to argv[1] (the
#: hook process ends with os._exit once its answer is out: no atexit, so wrap that)
MODULES_PROBE = """\
import json, os, sys
out = sys.argv.pop(1)
real_exit = os._exit
def dump_and_exit(code):
    open(out, "w").write(json.dumps(sorted(sys.modules)))
    real_exit(code)
os._exit = dump_and_exit
sys.argv = ["hookrails", *sys.argv[1:]]
from guardrails.cli.entry import main
main()
"""
HEAVY = ("pydantic", "jsonschema", "yaml", "sqlite_utils", "click", "wcmatch", "asyncio")
LIGHT_AGENT = """\
hooks:
  PreToolUse:
    - matcher: "Bash(rm -rf *)|Write(secrets/**)"
      hooks: [{use: deny, with: {reason: "not that"}}, light_hooks:note]
      agents: ["*"]
  PostToolUse:
    - hooks: [schema_guardrail]
"""


@pytest.mark.parametrize("ledger", [False, True], ids=["no ledger", "ledger"])
def test_a_cached_hook_process_loads_no_heavy_module(
    ledger: bool, env: dict[str, str], tmp_path: Path
) -> None:
    config = _project(tmp_path, LIGHT_AGENT, light_hooks="def note(e, c):\n    return None\n")
    args = ["hook", "--config", str(config)]
    args += ["--ledger", str(tmp_path / "l.db")] if ledger else ["--no-ledger"]
    stdin = json.dumps(payload("PreToolUse", tmp_path, tool_input={"command": "rm -rf /"}))
    out = tmp_path / "modules.json"
    for _ in range(2):  # the first run builds the cache (and the ledger's schema)
        proc = subprocess.run(
            [sys.executable, "-c", MODULES_PROBE, str(out), *args],
            input=stdin.encode(),
            capture_output=True,
            cwd=tmp_path,
            env=env,
            timeout=60,
        )
        assert proc.returncode == 0 and b'"deny"' in proc.stdout, proc
    loaded = set(json.loads(out.read_text()))
    assert [m for m in HEAVY if m in loaded] == []
    assert (
        "guardrails.builtins.schema.guardrail" not in loaded
    )  # another event's hook: not imported


# --- the compiled-definition cache ------------------------------------------------------


def test_an_edited_definition_applies_on_the_next_event(
    env: dict[str, str], tmp_path: Path
) -> None:
    config = _project(tmp_path, PRE_ONLY.format(pre_hooks="deny", stop_policy="continue"))
    stdin = payload("PreToolUse", tmp_path)
    args = ("--config", str(config), "--no-ledger")
    assert hook("script", *args, stdin=stdin, cwd=tmp_path, env=env).refused
    text = config.read_text().replace("matcher: Bash", "matcher: Read")
    config.write_text(text)  # same size, maybe the same mtime: the text decides
    run = hook("script", *args, stdin=stdin, cwd=tmp_path, env=env)
    assert (run.code, run.answer) == (0, {})


def test_an_edited_hooks_module_applies_on_the_next_event(
    env: dict[str, str], tmp_path: Path
) -> None:
    allow = "def check(e, c):\n    return None\n"
    config = _project(
        tmp_path, PRE_ONLY.format(pre_hooks="my_hooks:check", stop_policy="continue"),
        my_hooks=allow,
    )  # fmt: skip
    stdin = payload("PreToolUse", tmp_path)
    args = ("--config", str(config), "--no-ledger")
    assert hook("script", *args, stdin=stdin, cwd=tmp_path, env=env).answer == {}
    (tmp_path / "my_hooks.py").write_text(
        "from guardrails import HookResult\n"
        "def check(e, c):\n    return HookResult.deny('edited')\n"
    )
    run = hook("script", *args, stdin=stdin, cwd=tmp_path, env=env)
    assert run.answer == _deny("edited")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(_defcache.CACHE_ENV, str(folder))
    return folder


def _refuse_full_load(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(path: Any) -> AgentDefinition:
        raise AssertionError("the file was parsed and validated again")

    monkeypatch.setattr(AgentDefinition, "from_file", staticmethod(fail))


def test_a_current_entry_skips_parsing_and_validation(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _project(tmp_path, "ledger: x.db\n" + AGENT.replace("events_hooks:", "hooks_x:"))
    (tmp_path / "hooks_x.py").write_text(EVENTS_HOOKS)
    full = _defcache.load_definition(str(config))
    _refuse_full_load(monkeypatch)
    cached = _defcache.load_definition(str(config))
    assert (cached.name, cached.ledger, cached.locations) == (
        full.name,
        full.ledger,
        full.locations,
    )
    assert cached.hooks.keys() == full.hooks.keys()
    assert [m.on_failure for m in cached.hooks["AgentStop"]] == [None]
    only = _defcache.load_definition(str(config), ["UserPromptSubmit"])
    assert list(only.hooks) == ["UserPromptSubmit"]


#: ways an entry stops being current or usable: (name, change to the entry's JSON)
STALE = [
    ("another hookrails version", lambda e: e["stamp"].__setitem__(0, "0.0.0")),
    ("another file text", lambda e: e.__setitem__("text", e["text"] + "\n")),
    ("another format", lambda e: e.__setitem__("format", 0)),
    ("missing key", lambda e: e.pop("definition")),
]


@pytest.mark.parametrize("tamper", [c[1] for c in STALE], ids=[c[0] for c in STALE])
def test_an_entry_that_is_not_current_is_rebuilt(tamper: Any, cache: Path, tmp_path: Path) -> None:
    config = _project(tmp_path, PRE_ONLY.format(pre_hooks="deny", stop_policy="block"))
    _defcache.load_definition(str(config))
    [entry_file] = cache.rglob("*.json")
    entry = json.loads(entry_file.read_text())
    if "definition" in entry:
        entry["definition"]["name"] = "poisoned"
    tamper(entry)
    entry_file.write_text(json.dumps(entry))
    assert _defcache.load_definition(str(config)).name == "agent"
    assert json.loads(entry_file.read_text())["definition"]["name"] == "agent"


def test_a_corrupt_entry_is_rebuilt(cache: Path, tmp_path: Path) -> None:
    config = _project(tmp_path, PRE_ONLY.format(pre_hooks="deny", stop_policy="block"))
    _defcache.load_definition(str(config))
    [entry_file] = cache.rglob("*.json")
    entry_file.write_text("{ not json")
    assert _defcache.load_definition(str(config)).hooks.keys() == {"PreToolUse", "AgentStop"}
    assert json.loads(entry_file.read_text())["format"] == _defcache._FORMAT


def test_no_cache_folder_only_costs_speed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _project(tmp_path, PRE_ONLY.format(pre_hooks="deny", stop_policy="block"))
    monkeypatch.setenv(_defcache.CACHE_ENV, "")
    assert _defcache.cache_dir() is None
    assert "PreToolUse" in _defcache.load_definition(str(config)).hooks
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv(_defcache.CACHE_ENV, str(blocked))
    assert "PreToolUse" in _defcache.load_definition(str(config)).hooks


def test_a_definition_that_is_not_plain_json_is_not_cached(cache: Path, tmp_path: Path) -> None:
    config = _project(
        tmp_path,
        "hooks:\n  PreToolUse:\n    - hooks: [{use: deny, with: {reason: 2026-01-31}}]\n",
    )
    _defcache.load_definition(str(config))
    assert not list(cache.rglob("*.json"))


def test_the_cache_key_is_the_absolute_path(cache: Path, tmp_path: Path) -> None:
    config = _project(tmp_path, "hooks: {}\n")
    _defcache.load_definition(str(config))
    [entry_file] = cache.rglob("*.json")
    assert entry_file == Path(_defcache.entry_path(str(config.resolve()), str(cache)))
    assert json.loads(entry_file.read_text())["config"] == str(config)
