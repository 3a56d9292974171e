"""``hookrails claude install`` / ``uninstall``: our entries in Claude Code's settings.json.

The contract: one entry per event the definition binds; everything else in
the file stays as it was; running install twice changes nothing; uninstall
removes exactly our entries; a bad file is reported with its line and never
written. The installed command is run through a shell the way Claude Code
runs it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from guardrails.claude_code.settings_install import is_ours
from guardrails.cli.main import cli
from guardrails.definition.install_plan import coverage_tag, plan_matchers

SCRIPT = Path(sys.executable).parent / ("hookrails.exe" if os.name == "nt" else "hookrails")
EXE = (
    shlex.quote(str(SCRIPT)) if SCRIPT.is_file() else f"{shlex.quote(sys.executable)} -m guardrails"
)

AGENT = """\
hooks:
  PreToolUse:
    - matcher: "Bash(rm -rf *)"
      hooks: [{use: deny, with: {reason: "rm -rf is not allowed"}}]
  Stop:
    - hooks: [{use: inject, with: {text: "x"}}]
  SessionStart:
    - hooks: [{use: inject, with: {text: "house rules"}}]
"""
#: the handlers' timeout: the default 30 s budget + the default 5 s hook timeout + 1 s (the
#: longest deadline), + 5 s for the hook process to start and load the definition
TIMEOUT = 41
PRE_ONLY = """\
hooks:
  PreToolUse:
    - hooks: [{use: deny, with: {reason: "nothing today"}}]
"""

#: a settings file with things of its own: permissions, env, user hooks, an empty list
USER_SETTINGS: dict[str, Any] = {
    "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(.env)"]},
    "env": {"FOO": "1"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done", "timeout": 5}]}],
        "Notification": [],
    },
}


REF = "${CLAUDE_PROJECT_DIR}/agent.yaml"
#: the plans of agent.yaml and pre.yaml's tool events, as install writes them
PLANS = {
    "agent.yaml": {"PreToolUse": plan_matchers("PreToolUse", [("Bash(rm -rf *)", False)])},
    "pre.yaml": {"PreToolUse": plan_matchers("PreToolUse", [(None, False)])},
}


def _handler(args: list[str]) -> dict[str, Any]:
    if SCRIPT.is_file():
        return {"type": "command", "command": str(SCRIPT), "args": ["hook", *args]}
    words = [a if a.startswith("${") else shlex.quote(a) for a in args]
    return {"type": "command", "command": " ".join([EXE, "hook", *words])}


def ours(event: str, config: str = REF, plan_of: str = "agent.yaml") -> dict[str, Any]:
    """The deciding handler install writes for ``event``."""
    args = ["--config", config, "--event", event]
    plan = PLANS[plan_of].get(event)
    if plan is not None:
        args += ["--covers", coverage_tag(plan)]
    if event == "ConfigChange":
        args.append("--protect-settings")
    handler = {**_handler(args), "timeout": TIMEOUT, "statusMessage": "hookrails"}
    if plan is not None and plan.condition:
        handler["if"] = plan.condition
    if event in ("PreToolUse", "ConfigChange", "PreSkillShellCommand"):
        handler["onFailure"] = "block"
    return handler


def guards(config: str = REF) -> dict[str, list[dict[str, Any]]]:
    """What install adds by default: ConfigChange runs protect_guard_settings, and a skill's
    shell command is judged by PreToolUse's judges (the definitions here bind ``deny``)."""
    return {e: [group(ours(e, config))] for e in ("ConfigChange", "PreSkillShellCommand")}


def recorder(event: str, config: str = REF) -> dict[str, Any]:
    """A record-only handler (async: the agent never waits)."""
    args = ["--config", config, "--event", event, "--record-only"]
    return {**_handler(args), "timeout": TIMEOUT, "statusMessage": "hookrails", "async": True}


def group(handler: dict[str, Any], matcher: str | None = None) -> dict[str, Any]:
    return {"hooks": [handler]} if matcher is None else {"matcher": matcher, "hooks": [handler]}


def recorders(config: str = REF) -> dict[str, list[dict[str, Any]]]:
    events = ("PostToolUse", "PostToolUseFailure", "PostToolBatch")
    return {e: [group(recorder(e, config))] for e in events}


def pre_group(config: str = REF, plan_of: str = "agent.yaml") -> dict[str, Any]:
    return group(ours("PreToolUse", config, plan_of), PLANS[plan_of]["PreToolUse"].matcher)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder (the working directory) with agent.yaml; caches and HOME in tmp."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "agent.yaml").write_text(AGENT)
    (folder / "pre.yaml").write_text(PRE_ONLY)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("HOOKRAILS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return folder


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["claude", *args])
    return result.exit_code, result.stdout, result.stderr


def settings(folder: Path) -> Any:
    return json.loads((folder / ".claude" / "settings.json").read_text())


def seed(folder: Path, data: Any) -> Path:
    path = folder / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data, indent=4) + "\n")
    return path


# --- install ----------------------------------------------------------------------------


def test_install_adds_one_entry_per_bound_event(project: Path) -> None:
    code, out, _ = run("install", "--config", "agent.yaml")
    assert code == 0
    assert out == (
        "installed hookrails (command hooks) for PreToolUse, Stop, SessionStart, ConfigChange, "
        "PreSkillShellCommand (record-only: "
        "PostToolUse, PostToolUseFailure, PostToolBatch) in "
        f"{project / '.claude' / 'settings.json'}\n"
    )
    assert settings(project) == {
        "hooks": {
            "PreToolUse": [pre_group()],  # only Bash calls starting "rm -rf " reach hookrails
            **{e: [group(ours(e))] for e in ("Stop", "SessionStart")},
            **guards(),
            **recorders(),
        }
    }
    assert settings(project)["hooks"]["PreToolUse"][0] == {
        "matcher": "Bash",
        "hooks": [{**ours("PreToolUse"), "if": "Bash(rm -rf *)"}],
    }


def test_existing_hooks_and_settings_stay_untouched(project: Path) -> None:
    seed(project, USER_SETTINGS)
    assert run("install", "--config", "agent.yaml")[0] == 0
    after = settings(project)
    assert {k: v for k, v in after.items() if k != "hooks"} == {
        "permissions": USER_SETTINGS["permissions"],
        "env": USER_SETTINGS["env"],
    }
    hooks = USER_SETTINGS["hooks"]
    assert after["hooks"] == {
        "PreToolUse": [*hooks["PreToolUse"], pre_group()],
        "Stop": [*hooks["Stop"], group(ours("Stop"))],
        "Notification": [],
        "SessionStart": [group(ours("SessionStart"))],
        **guards(),
        **recorders(),
    }


def test_installing_twice_changes_nothing(project: Path) -> None:
    path = seed(project, USER_SETTINGS)
    run("install", "--config", "agent.yaml")
    data = settings(project)  # the user adds a hook after ours: ours stays where it is
    data["hooks"]["PreToolUse"].append({"hooks": [{"type": "command", "command": "late.sh"}]})
    path.write_text(json.dumps(data))
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    code, out, _ = run("install", "--config", "agent.yaml")
    assert (code, out) == (0, f"hookrails is already installed in {path}; no change\n")
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_installing_another_definition_replaces_ours(project: Path) -> None:
    seed(project, USER_SETTINGS)
    run("install", "--config", "agent.yaml")
    code, out, _ = run("install", "--config", "pre.yaml")
    assert code == 0 and "(replacing 8 earlier hookrails entries)" in out
    hooks = settings(project)["hooks"]
    assert hooks["PreToolUse"][-1] == pre_group("${CLAUDE_PROJECT_DIR}/pre.yaml", "pre.yaml")
    assert hooks["Stop"] == USER_SETTINGS["hooks"]["Stop"]  # kept: it was not ours
    assert "SessionStart" not in hooks  # emptied by us: gone


def test_a_definition_outside_the_project_is_named_by_absolute_path(
    project: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "shared dir" / "policy.yaml"
    elsewhere.parent.mkdir()
    elsewhere.write_text(PRE_ONLY)
    assert run("install", "--config", str(elsewhere))[0] == 0
    [written] = settings(project)["hooks"]["PreToolUse"]
    assert written == pre_group(str(elsewhere), "pre.yaml")  # one argument: no quoting


@pytest.mark.parametrize("config_dir", [True, False], ids=["CLAUDE_CONFIG_DIR", "HOME"])
def test_user_scope_writes_the_user_settings(
    config_dir: bool, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / ("claude-config" if config_dir else "home/.claude")
    if config_dir:
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    code, out, _ = run("install", "--user", "--config", "pre.yaml")
    assert code == 0 and str(folder / "settings.json") in out
    data = json.loads((folder / "settings.json").read_text())
    config = str(project / "pre.yaml")
    assert data == {
        "hooks": {
            "PreToolUse": [pre_group(config, "pre.yaml")],
            **guards(config),
            **recorders(config),
        }
    }
    assert not (project / ".claude").exists()


def test_portable_names_hookrails_from_path(project: Path) -> None:
    assert run("install", "--portable", "--config", "pre.yaml")[0] == 0
    [written] = settings(project)["hooks"]["PreToolUse"]
    assert (written["hooks"][0]["command"], written["hooks"][0]["args"][:3]) == (
        "hookrails",
        ["hook", "--config", "${CLAUDE_PROJECT_DIR}/pre.yaml"],
    )


def test_an_invalid_definition_is_refused_and_nothing_is_written(project: Path) -> None:
    path = seed(project, USER_SETTINGS)
    before = path.read_bytes()
    (project / "bad.yaml").write_text("hooks:\n  PreToolUse:\n    - matcher: 'Bash('\n")
    code, _, err = run("install", "--config", "bad.yaml")
    assert code == 1 and err.startswith("error: bad.yaml:") and err.count("\n") == 1
    assert path.read_bytes() == before


def test_a_definition_that_binds_nothing_writes_nothing(project: Path) -> None:
    (project / "empty.yaml").write_text("hooks: {}\n")
    code, out, _ = run("install", "--config", "empty.yaml")
    assert code == 0 and "no change" in out
    assert not (project / ".claude").exists()


@pytest.mark.parametrize(
    ("yaml_text", "blocking"),
    [
        ("  Stop:\n    - hooks: [{use: inject, with: {text: x}}]\n", set()),
        (  # Claude ignores onFailure on Stop: hookrails' own exit 2 blocks it instead
            "  Stop:\n    - on_failure: block\n      hooks: [{use: inject, with: {text: x}}]\n",
            set(),
        ),
        (
            "  ConfigChange:\n    - on_failure: block\n      hooks: [allow]\n",
            {"ConfigChange"},
        ),
        (  # Claude cannot block a Notification: nothing fails closed there
            "  Notification:\n    - on_failure: block\n      hooks: [allow]\n",
            set(),
        ),
        ("  PreSkillShellCommand:\n    - hooks: [allow]\n", {"PreSkillShellCommand"}),
        ("  PermissionRequest:\n    - hooks: [allow]\n", set()),
        (
            "  UserPromptSubmit:\n    - hooks: [{use: inject, with: {text: x}}]\n",
            {"UserPromptSubmit"},
        ),
        (
            "  UserPromptSubmit:\n    - on_failure: continue\n      hooks: [{use: inject, with: "
            "{text: x}}]\n",
            set(),
        ),
    ],
    ids=[
        "stop-default",
        "stop-block",
        "config-change-block",
        "notification-block",
        "skill-shell-default",
        "permission-request-default",
        "prompt-default",
        "prompt-continue",
    ],
)
def test_on_failure_block_is_written_where_the_event_fails_closed(
    yaml_text: str, blocking: set[str], project: Path
) -> None:
    (project / "policy.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - on_failure: continue\n      hooks: [allow]\n" + yaml_text
    )
    assert run("install", "--config", "policy.yaml")[0] == 0
    written = {
        event: groups[0]["hooks"][0].get("onFailure")
        for event, groups in settings(project)["hooks"].items()
    }
    assert written.pop("PreToolUse") == "block"  # always: a missed PreToolUse check lets a call run
    # and ConfigChange, where protect_guard_settings runs by default (docs/builtins.md)
    assert {e for e, v in written.items() if v == "block"} == blocking | {"ConfigChange"}
    assert set(written.values()) <= {"block", None}


# --- http hooks ---------------------------------------------------------------------------

#: (extra args, the handler written)
HTTP_CASES: list[tuple[list[str], dict[str, Any]]] = [
    (
        ["--http"],
        {"type": "http", "url": "http://127.0.0.1:8787/v1/claude/hook", "timeout": TIMEOUT},
    ),
    (
        ["--http", "http://127.0.0.1:9000/"],
        {"type": "http", "url": "http://127.0.0.1:9000/v1/claude/hook", "timeout": TIMEOUT},
    ),
    (
        ["--http", "https://guard.internal/v1/claude/hook", "--token"],
        {
            "type": "http",
            "url": "https://guard.internal/v1/claude/hook",
            "timeout": TIMEOUT,
            "headers": {"Authorization": "Bearer $HOOKRAILS_TOKEN"},
            "allowedEnvVars": ["HOOKRAILS_TOKEN"],
        },
    ),
]


@pytest.mark.parametrize(("args", "handler"), HTTP_CASES, ids=["default", "base URL", "token"])
def test_http_install_points_at_hookrails_serve(
    args: list[str], handler: dict[str, Any], project: Path
) -> None:
    run("install", "--config", "pre.yaml")  # command hooks first: http replaces them
    code, out, _ = run("install", "--config", "pre.yaml", *args)
    assert code == 0 and "(http hooks)" in out and "replacing 6" in out
    written = {**handler, "onFailure": "block"}  # PreToolUse: an unreachable server refuses
    # a warm server also hears prompts (a halt ends with the turn), session ends (it
    # forgets the session) and every call's end (its ledger closes the call's row); nothing
    # binds them, so they fail open
    assert settings(project) == {
        "hooks": {
            "PreToolUse": [{"hooks": [written]}],
            "PostToolUse": [{"hooks": [handler]}],
            "PostToolUseFailure": [{"hooks": [handler]}],
            "UserPromptSubmit": [{"hooks": [handler]}],
            "SessionEnd": [{"hooks": [handler]}],
            # pre.yaml's deny judges a skill's shell command too (the server loads it all)
            "PreSkillShellCommand": [{"hooks": [written]}],
        }
    }
    assert run("uninstall")[1].startswith("removed 6 hookrails entries")
    assert settings(project) == {}


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--token"], 2, "--token goes with --http"),
        (["--http", "ftp://x"], 1, "needs an http:// or https:// URL"),
    ],
)
def test_bad_http_options_are_refused(
    args: list[str], code: int, message: str, project: Path
) -> None:
    result = run("install", "--config", "pre.yaml", *args)
    assert result[0] == code and message in result[2]
    assert not (project / ".claude").exists()


# --- uninstall ----------------------------------------------------------------------------


def test_uninstall_restores_the_file_as_it_was(project: Path) -> None:
    seed(project, USER_SETTINGS)
    run("install", "--config", "agent.yaml")
    code, out, _ = run("uninstall")
    assert code == 0 and out.startswith("removed 8 hookrails entries from ")
    assert settings(project) == USER_SETTINGS


def test_uninstall_removes_only_our_handlers_from_a_shared_group(project: Path) -> None:
    mine = {"type": "command", "command": "./check.sh"}
    seed(
        project, {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [mine, ours("PreToolUse")]}]}}
    )
    assert run("uninstall")[0] == 0
    assert settings(project) == {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [mine]}]}}


def test_uninstall_without_our_entries_changes_nothing(project: Path) -> None:
    path = seed(project, USER_SETTINGS)
    before = path.read_bytes()
    code, out, _ = run("uninstall")
    assert (code, out) == (0, f"no hookrails entries in {path}; no change\n")
    assert path.read_bytes() == before
    assert run("uninstall", "--user")[0] == 0  # no user settings file at all: fine


#: handlers: (handler, is it ours?)
OWNERSHIP = [
    ({"type": "command", "command": "hookrails hook --config a.yaml"}, True),
    ({"type": "command", "command": "/opt/venv/bin/hookrails hook --config 'a b.yaml'"}, True),
    ({"type": "command", "command": "'/my tools/hookrails' hook --config a.yaml"}, True),
    ({"type": "command", "command": "/usr/bin/python3 -m guardrails hook --config a.yaml"}, True),
    ({"type": "http", "url": "http://127.0.0.1:8787/v1/claude/hook"}, True),
    ({"type": "command", "command": "/v/bin/hookrails", "args": ["hook", "--config", "a"]}, True),
    ({"type": "command", "command": "hookrails.exe", "args": ["hook"]}, True),
    ({"type": "command", "command": "hookrails", "args": ["check", "a.yaml"]}, False),
    ({"type": "command", "command": "/bin/other", "args": ["hook"]}, False),
    ({"type": "command", "command": "hookrails check agent.yaml"}, False),
    ({"type": "command", "command": "echo hookrails hook"}, False),
    ({"type": "command", "command": "my-hookrails hook"}, False),
    ({"type": "command", "command": "hookrails hook 'unbalanced"}, False),
    ({"type": "http", "url": "http://127.0.0.1:8787/other"}, False),
    ({"type": "prompt", "prompt": "hookrails hook"}, False),
    ({"command": "hookrails hook"}, False),
    ("hookrails hook", False),
]


@pytest.mark.parametrize(("handler", "expected"), OWNERSHIP)
def test_our_entries_are_known_by_their_shape(handler: Any, expected: bool) -> None:
    assert is_ours(handler) is expected


# --- bad files -------------------------------------------------------------------------------

#: (name, file text, where the error points)
BAD_FILES = [
    ("invalid JSON", '{\n  "hooks": {\n    "PreToolUse": [,]\n  }\n}\n', ":3: invalid JSON"),
    ("comment", '{\n  // mine\n  "hooks": {}\n}\n', ":2: invalid JSON"),
    ("top level is a list", "[]\n", ": expected a JSON object at the top level, got a list"),
    ("hooks is a list", '{\n  "hooks": []\n}\n', ":2: hooks: expected an object"),
    ("event is not a list", '{"hooks": {\n "Stop": {}\n}}\n', ":2: hooks.Stop: expected a list"),
    ("group is a string", '{"hooks": {"Stop": [\n"x"\n]}}\n', ":2: hooks.Stop[0]: expected an"),
    ("group hooks is a string", '{"hooks": {"Stop": [\n{"hooks": "x"}]}}\n',
     ":2: hooks.Stop[0].hooks: expected a list"),
    ("handler is a number", '{"hooks": {"Stop": [{"hooks": [\n1]}]}}\n',
     ":2: hooks.Stop[0].hooks[0]: expected an object, got a number"),
    ("repeated key", '{\n  "hooks": {},\n  "hooks": {}\n}\n', ":3: hooks: duplicate key"),
    # what a rewrite could not write back (Python reads these; JSON.parse or UTF-8 cannot)
    ("NaN", '{\n  "env": {\n    "X": NaN\n  }\n}\n', ":3: env.X: NaN is not JSON"),
    ("-Infinity", '{"hooks": {},\n "n": -Infinity}\n', ":2: n: -Infinity is not JSON"),
    ("a number out of range", '{\n  "cleanupPeriodDays": 1e400\n}\n',
     ":2: cleanupPeriodDays: the number 1e400 is out of range (it reads as infinity"),
    ("a lone surrogate", '{\n  "env": {"X": "a\\ud800"}\n}\n',
     ":2: env.X: a string holds a lone surrogate"),
    ("a lone surrogate key", '{"hooks": {},\n  "\\udc00": 1\n}\n',
     ":2: \\udc00: a key holds a lone surrogate"),
]  # fmt: skip


@pytest.mark.parametrize("command", ["install", "uninstall"])
@pytest.mark.parametrize(
    ("text", "where"), [c[1:] for c in BAD_FILES], ids=[c[0] for c in BAD_FILES]
)
def test_a_bad_settings_file_is_named_and_never_written(
    command: str, text: str, where: str, project: Path
) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)
    args = ["install", "--config", "agent.yaml"] if command == "install" else ["uninstall"]
    code, out, err = run(*args)
    assert code == 1 and out == ""
    assert err.startswith(f"error: {path}{where}") and err.count("\n") == 1, err
    assert path.read_text() == text
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_a_definition_path_that_is_not_utf8_is_refused_naming_the_settings_file(
    project: Path,
) -> None:
    name = os.fsdecode(b"agent-\xff.yaml")  # a Linux file name that is not UTF-8
    (project / name).write_text(PRE_ONLY)
    path = seed(project, USER_SETTINGS)
    before = path.read_bytes()
    code, out, err = run("install", "--config", name)
    assert (code, out) == (1, "")
    assert err.startswith(f"error: {path}: the new settings cannot be written as UTF-8 JSON")
    assert err.count("\n") == 1
    assert path.read_bytes() == before


def test_a_file_that_is_not_utf8_is_named_with_its_line(project: Path) -> None:
    path = seed(project, {})
    path.write_bytes(b'{\n"env": "\xff"}\n')
    code, _, err = run("install", "--config", "agent.yaml")
    assert code == 1 and err.startswith(f"error: {path}:2: not UTF-8 text")
    assert path.read_bytes() == b'{\n"env": "\xff"}\n'


def test_an_empty_file_counts_as_no_settings(project: Path) -> None:
    path = seed(project, {})
    path.write_text("")
    assert run("install", "--config", "pre.yaml")[0] == 0
    assert list(settings(project)["hooks"]) == [
        "PreToolUse",
        "ConfigChange",
        "PreSkillShellCommand",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
    ]


# --- dry run, writing --------------------------------------------------------------------------


def test_dry_run_prints_the_diff_and_writes_nothing(project: Path) -> None:
    path = seed(project, USER_SETTINGS)
    before = path.read_bytes()
    code, out, _ = run("install", "--config", "pre.yaml", "--dry-run")
    assert code == 0
    lines = out.splitlines()
    assert lines[:2] == [f"--- {path}", f"+++ {path}"]
    assert any(line.startswith("+") and '"PreToolUse"' in line for line in lines)
    assert lines[-1] == f"dry run: {path} not written"
    assert path.read_bytes() == before
    run("install", "--config", "pre.yaml")
    code, out, _ = run("uninstall", "--dry-run")
    assert code == 0 and any(
        line.startswith("-") and '"--record-only"' in line for line in out.splitlines()
    )
    assert '"--record-only"' in path.read_text()


def test_dry_run_into_a_missing_file(project: Path) -> None:
    code, out, _ = run("install", "--config", "pre.yaml", "--dry-run")
    assert code == 0 and out.startswith("--- /dev/null\n")
    assert not (project / ".claude").exists()


def test_a_write_keeps_the_mode_and_follows_a_symlink(project: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text(json.dumps(USER_SETTINGS))
    real.chmod(0o600)
    link = project / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    assert run("install", "--config", "pre.yaml")[0] == 0
    assert link.is_symlink() and (real.stat().st_mode & 0o777) == 0o600
    assert json.loads(real.read_text())["hooks"]["PreToolUse"][-1] == pre_group(
        "${CLAUDE_PROJECT_DIR}/pre.yaml", "pre.yaml"
    )
    assert sorted(p.name for p in real.parent.iterdir()) == ["settings.json"]


# --- the installed command, run as Claude Code runs it ----------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("portable", [False, True], ids=["absolute", "portable"])
def test_the_installed_command_enforces_the_deny(
    portable: bool, project: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "HOOKRAILS_LEDGER"}
    env["PATH"] = f"{SCRIPT.parent}{os.pathsep}{env.get('PATH', '')}"
    args = [sys.executable, "-m", "guardrails", "claude", "install", "--config", "agent.yaml"]
    proc = subprocess.run(
        args + (["--portable"] if portable else []),
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    [written] = settings(project)["hooks"]["PreToolUse"]
    handler = written["hooks"][0]
    other = tmp_path / "elsewhere"  # Claude runs hooks with the project in the environment
    other.mkdir()
    event = {
        "session_id": "s1",
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /"},
        "tool_use_id": "toolu_1",
    }
    # exec form, as Claude runs it: no shell, ${CLAUDE_PROJECT_DIR} substituted per argument
    argv = [handler["command"]] + [
        a.replace("${CLAUDE_PROJECT_DIR}", str(project)) for a in handler["args"]
    ]
    run_env = {**env, "CLAUDE_PROJECT_DIR": str(project)}
    if portable:
        argv[0] = shutil.which("hookrails", path=run_env["PATH"]) or "hookrails"
    hook = subprocess.run(
        argv,
        input=json.dumps(event),
        capture_output=True,
        text=True,
        cwd=other,
        env=run_env,
        timeout=60,
    )
    # a Claude Code too old for exec form runs the bare command: it refuses (exit 2)
    bare = subprocess.run(
        [argv[0]], input=json.dumps(event), capture_output=True, text=True, env=run_env
    )
    assert bare.returncode == 2 and bare.stdout == ""
    assert hook.returncode == 0, hook.stderr
    answer = json.loads(hook.stdout)["hookSpecificOutput"]
    assert (answer["permissionDecision"], answer["permissionDecisionReason"]) == (
        "deny",
        "rm -rf is not allowed",
    )
    assert (other / ".hookrails" / "ledger.db").is_file()  # recorded, by the default rule


# --- narrow matchers, record-only handlers, --no-ledger -----------------------------------

NARROW = """\
hooks:
  PreToolUse:
    - matcher: "Bash|Write"
      hooks: [{use: deny, with: {reason: no}}]
  PostToolUse:
    - matcher: "mcp__github__*"
      hooks: [redact_secrets]
  PostToolUseFailure:
    - hooks: [schema_nudge]
"""


def test_tool_events_get_their_matcher_and_the_rest_is_recorded(project: Path) -> None:
    (project / "narrow.yaml").write_text(NARROW)
    assert run("install", "--config", "narrow.yaml")[0] == 0
    hooks = settings(project)["hooks"]
    ref = "${CLAUDE_PROJECT_DIR}/narrow.yaml"
    post = "^(?:mcp__github__[\\s\\S]*)$"
    assert [g.get("matcher") for g in hooks["PreToolUse"]] == ["Bash|Write"]
    assert [g.get("matcher") for g in hooks["PostToolUse"]] == [post, None]
    # the record-only PostToolUse skips what the deciding one hears; PostToolUseFailure's
    # deciding handler hears every call, so it has no record-only twin
    assert hooks["PostToolUse"][1]["hooks"][0]["args"][-3:] == ["--record-only", "--except", post]
    assert hooks["PostToolUse"][1]["hooks"][0]["async"] is True
    assert [g.get("matcher") for g in hooks["PostToolUseFailure"]] == [None]
    assert "--record-only" not in hooks["PostToolUseFailure"][0]["hooks"][0]["args"]
    assert hooks["PostToolBatch"] == [group(recorder("PostToolBatch", ref))]
    assert run("install", "--config", "narrow.yaml")[1].endswith("no change\n")
    assert run("uninstall")[1].startswith("removed 7 hookrails entries")  # + the 2 guards


BATCH = """\
hooks:
  PreToolUse:
    - matcher: "Bash(rm -rf *)"
      hooks: [{use: deny, with: {reason: "rm -rf is not allowed"}}]
  PostToolBatch:
    - hooks: [{use: deny, with: {reason: "one batch is enough"}}]
"""


def test_a_bound_post_tool_batch_keeps_its_record_only_twin(project: Path) -> None:
    """The deciding PostToolBatch handler decides; only the record-only one closes the row
    of a call Claude never ran, so both are written (the e2e twin is in
    tests/e2e/test_claude_blocks.py)."""
    (project / "agent.yaml").write_text(BATCH)
    code, out, _ = run("install", "--config", "agent.yaml")
    assert code == 0
    assert settings(project)["hooks"]["PostToolBatch"] == [
        group(ours("PostToolBatch")),
        group(recorder("PostToolBatch")),
    ]
    assert out.startswith(
        "installed hookrails (command hooks) for PreToolUse, PostToolBatch, ConfigChange, "
        "PreSkillShellCommand (record-only: "
        "PostToolUse, PostToolUseFailure, PostToolBatch) in "
    )


def test_an_event_with_a_deciding_and_a_record_only_handler_is_reported_as_both(
    project: Path,
) -> None:
    (project / "narrow.yaml").write_text(NARROW)
    code, out, _ = run("install", "--config", "narrow.yaml")
    assert code == 0
    assert out.startswith(
        "installed hookrails (command hooks) for PreToolUse, PostToolUse, PostToolUseFailure, "
        "ConfigChange, PreSkillShellCommand (record-only: PostToolUse, PostToolBatch) in "
    )


def test_no_ledger_writes_no_record_only_handlers(project: Path) -> None:
    assert run("install", "--no-ledger", "--config", "agent.yaml")[0] == 0
    hooks = settings(project)["hooks"]
    assert list(hooks) == [
        "PreToolUse",
        "Stop",
        "SessionStart",
        "ConfigChange",
        "PreSkillShellCommand",
    ]
    assert all("--no-ledger" in g["hooks"][0]["args"] for gs in hooks.values() for g in gs)
    assert run("install", "--no-ledger", "--http", "--config", "agent.yaml")[0] == 2


def test_the_version_of_claude_on_path_is_checked_but_never_fails_the_install(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for version, warned in [
        ("2.1.240 (Claude Code)", "is Claude Code 2.1.240"),
        ("2.1.332 (Claude Code)", None),
        ("3.0.0 (Claude Code)", None),
        ("garbage", "could not tell the version"),
    ]:
        claude.write_text(f"#!/bin/sh\necho '{version}'\n")
        claude.chmod(0o755)
        code, _, err = run("install", "--config", "pre.yaml")
        assert code == 0
        assert (warned in err) if warned else err == "", (version, err)


@pytest.mark.parametrize(
    ("matchers", "written"),
    [
        (["'.envrc|.env'", "pyproject.toml"], ".envrc|.env|pyproject.toml"),
        (["'*.toml'", ".envrc"], ".envrc"),  # a glob names no file Claude could watch
        (["'*'"], None),
    ],
)
def test_file_changed_is_installed_with_the_files_to_watch(
    matchers: list[str], written: str | None, project: Path
) -> None:
    """Claude watches only the files its FileChanged matchers name."""
    entries = "".join(f"    - matcher: {m}\n      hooks: [allow]\n" for m in matchers)
    (project / "watch.yaml").write_text("hooks:\n  FileChanged:\n" + entries)
    assert run("install", "--config", "watch.yaml")[0] == 0
    (group,) = settings(project)["hooks"]["FileChanged"]
    assert group.get("matcher") == written
    assert run("install", "--config", "watch.yaml")[1].strip().endswith("no change")
