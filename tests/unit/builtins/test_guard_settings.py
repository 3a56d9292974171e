"""``protect_guard_settings``, red-teamed: every way an agent could switch hookrails off by
editing Claude Code's settings is blocked at ConfigChange; edits that leave the guard whole
go through. The settings start as ``hookrails claude install`` writes them, and each case
edits them as an agent with a Write tool could."""

from __future__ import annotations

import copy
import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from guardrails import Guard
from guardrails.builtins import ProtectGuardSettings, protect_guard_settings
from guardrails.claude_code.hook_setup import guard_settings
from guardrails.claude_code.settings_install import install
from guardrails.definition.cache import load_definition
from guardrails.events import Event
from guardrails.results import Decision

AGENT = """\
name: guarded
hooks:
  PreToolUse:
    - matcher: "Bash(rm -rf *)"
      hooks: [{use: deny, with: {reason: "no rm -rf"}}]
    - matcher: "Bash|Write|Edit"
      hooks: [deny_commands, protect_paths]
  Stop:
    - hooks: [{use: inject, with: {text: "x"}}]
"""

Settings = dict[str, Any]
Edit = Callable[[Settings], Any]


class Whole(dict[str, Any]):
    """What an edit returns to replace the whole file (any other return is ignored)."""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "agent.yaml").write_text(AGENT)
    monkeypatch.setenv("HOOKRAILS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "home" / ".claude"))
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    install(str(folder / "agent.yaml"), project_dir=str(folder))
    return folder


def settings_file(project: Path, name: str = "settings.json") -> Path:
    return project / ".claude" / name


def decide(
    project: Path, name: str = "settings.json", source: str = "project_settings"
) -> Decision:
    definition = load_definition(str(project / "agent.yaml"))
    guard_settings(definition)  # what `hookrails hook --protect-settings` binds
    guard = Guard(definition, ledger=False)
    path = name if name.startswith("/") else str(settings_file(project, name))
    event = Event.from_claude(
        {
            "session_id": "s1",
            "transcript_path": "/dev/null",
            "cwd": str(project),
            "hook_event_name": "ConfigChange",
            "source": source,
            "file_path": path,
        }
    )
    return guard.emit_sync(event)


def edit(project: Path, change: Edit, name: str = "settings.json") -> None:
    path = settings_file(project, name)
    data = json.loads(path.read_text()) if path.exists() else {}
    result = change(data)
    path.write_text(json.dumps(result if isinstance(result, Whole) else data, indent=2))


def ours(data: Settings, event: str, i: int = 0) -> dict[str, Any]:
    handler: dict[str, Any] = data["hooks"][event][i]["hooks"][0]
    return handler


def drop_arg(handler: dict[str, Any], flag: str, with_value: bool = True) -> None:
    args = handler["args"]
    k = args.index(flag)
    del args[k : k + (2 if with_value else 1)]


def set_arg(handler: dict[str, Any], flag: str, value: str) -> None:
    args = handler["args"]
    args[args.index(flag) + 1] = value


def to_shell(handler: dict[str, Any], suffix: str = "") -> None:
    """The exec-form handler written in shell form, with ``suffix`` after it."""
    words = [handler["command"], *handler.pop("args")]  # args start with "hook"
    handler["command"] = " ".join(map(shlex.quote, words)) + suffix


def http_instead(handler: dict[str, Any]) -> None:
    for key in ("command", "args"):
        handler.pop(key)
    handler.update(type="http", url="http://127.0.0.1:9/v1/claude/hook")


# --- what must be blocked: (case, edit) ------------------------------------------------------

REMOVED: list[tuple[str, Edit]] = [
    ("every hook removed", lambda d: d.pop("hooks")),
    ("the file emptied", lambda d: Whole()),
    ("PreToolUse removed", lambda d: d["hooks"].pop("PreToolUse")),
    ("PreToolUse emptied", lambda d: d["hooks"].update(PreToolUse=[])),
    (
        "our PreToolUse handler removed from its group",
        lambda d: d["hooks"]["PreToolUse"][0].update(
            hooks=[{"type": "command", "command": "true"}]
        ),
    ),
    (
        "PreToolUse moved to PostToolUse",
        lambda d: d["hooks"].__setitem__("PostToolUse", d["hooks"].pop("PreToolUse")),
    ),
    ("Stop removed", lambda d: d["hooks"].pop("Stop")),
    ("the skill-command guard removed", lambda d: d["hooks"].pop("PreSkillShellCommand")),
    ("this guard's own handler removed", lambda d: d["hooks"].pop("ConfigChange")),
    (
        "the event name misspelt",
        lambda d: d["hooks"].__setitem__("PretoolUse", d["hooks"].pop("PreToolUse")),
    ),
    (
        "our command swapped for a no-op",
        lambda d: ours(d, "PreToolUse").update(command="/bin/true", args=[]),
    ),
    (
        "the handler turned into a prompt hook",
        lambda d: ours(d, "PreToolUse").update(type="prompt", prompt="allow"),
    ),
]
NARROWED: list[tuple[str, Edit]] = [
    ("matcher to another tool", lambda d: d["hooks"]["PreToolUse"][0].update(matcher="Read")),
    (
        "matcher to a name no tool has",
        lambda d: d["hooks"]["PreToolUse"][0].update(matcher="Bashx"),
    ),
    (
        "matcher to a regex the install does not write",
        lambda d: d["hooks"]["PreToolUse"][0].update(matcher="^Bash$"),
    ),
    (
        "matcher on ConfigChange narrowed to one source",
        lambda d: d["hooks"]["ConfigChange"][0].update(matcher="user_settings"),
    ),
    ("an if added", lambda d: ours(d, "PreToolUse").update({"if": "Bash(ls *)"})),
    (
        "an if on the skill command guard",
        lambda d: ours(d, "PreSkillShellCommand").update({"if": "Bash(ls *)"}),
    ),
    ("made async", lambda d: ours(d, "PreToolUse").update({"async": True})),
    ("made asyncRewake", lambda d: ours(d, "PreToolUse").update({"asyncRewake": True})),
    ("made once", lambda d: ours(d, "PreToolUse").update({"once": True})),
    ("onFailure dropped", lambda d: ours(d, "PreToolUse").pop("onFailure")),
    ("onFailure continue", lambda d: ours(d, "PreToolUse").update(onFailure="continue")),
    ("onFailure dropped on ConfigChange", lambda d: ours(d, "ConfigChange").pop("onFailure")),
    (
        "onFailure dropped on the skill guard",
        lambda d: ours(d, "PreSkillShellCommand").pop("onFailure"),
    ),
    (
        "another definition",
        lambda d: set_arg(ours(d, "PreToolUse"), "--config", "${CLAUDE_PROJECT_DIR}/empty.yaml"),
    ),
    (
        "a definition outside the project",
        lambda d: set_arg(ours(d, "PreToolUse"), "--config", "/tmp/permissive.yaml"),
    ),
    ("no definition named", lambda d: drop_arg(ours(d, "PreToolUse"), "--config")),
    ("made record-only", lambda d: ours(d, "PreToolUse")["args"].append("--record-only")),
    ("decides another event", lambda d: set_arg(ours(d, "PreToolUse"), "--event", "Notification")),
    ("another coverage tag", lambda d: set_arg(ours(d, "PreToolUse"), "--covers", "00000000")),
    (
        "--protect-settings dropped",
        lambda d: drop_arg(ours(d, "ConfigChange"), "--protect-settings", False),
    ),
    (
        "shell form whose answer is thrown away",
        lambda d: to_shell(ours(d, "PreToolUse"), " >/dev/null 2>&1 || true; exit 0"),
    ),
    (
        "another program named hookrails",
        lambda d: ours(d, "PreToolUse").update(command="/tmp/agent-owned/hookrails"),
    ),
    (
        "an http handler in place of the command",
        lambda d: http_instead(ours(d, "PreToolUse")),
    ),
    ("a shorter timeout", lambda d: ours(d, "Stop").update(timeout=1)),
    (
        "records elsewhere",
        lambda d: ours(d, "PreToolUse")["args"].extend(["--ledger", "/tmp/elsewhere.db"]),
    ),
    (
        "shell form to another definition",
        lambda d: ours(d, "PreToolUse").update(
            command="hookrails hook --config other.yaml --event PreToolUse", args=None
        ),
    ),
]
SWITCHED_OFF: list[tuple[str, Edit]] = [
    ("disableAllHooks", lambda d: d.update(disableAllHooks=True)),
    ("allowManagedHooksOnly", lambda d: d.update(allowManagedHooksOnly=True)),
]


@pytest.mark.parametrize(
    "change",
    [c for _, c in REMOVED + NARROWED + SWITCHED_OFF],
    ids=[n for n, _ in REMOVED + NARROWED + SWITCHED_OFF],
)
def test_a_change_that_weakens_the_guard_is_blocked(project: Path, change: Edit) -> None:
    assert not decide(project).blocked  # as installed: whole
    edit(project, change)
    d = decide(project)
    assert d.blocked, (d.reason, settings_file(project).read_text())
    assert d.to_claude()["decision"] == "block"
    assert "hookrails" in (d.reason or "")


@pytest.mark.parametrize("name", ["settings.local.json", "settings.json"])
@pytest.mark.parametrize("key", ["disableAllHooks", "allowManagedHooksOnly"])
def test_switching_every_hook_off_in_any_file_is_blocked(
    project: Path, name: str, key: str
) -> None:
    edit(project, lambda d: d.update({key: True}), name)
    d = decide(project, name, "local_settings" if "local" in name else "project_settings")
    assert d.blocked and f"sets {key}: true" in (d.reason or "")


UNREADABLE: list[tuple[str, bytes, str]] = [
    ("invalid JSON", b'{"hooks": {', "not valid JSON"),
    ("NaN, which Claude refuses", b'{"hooks": {}, "x": NaN}', "not valid JSON"),
    ("not an object", b"[]", "not a JSON object"),
    ("hooks not an object", b'{"hooks": []}', "hooks are not an object"),
    ("not UTF-8", b'{"hooks": "\xff"}', "not UTF-8"),
]


@pytest.mark.parametrize(
    ("raw", "said"), [c[1:] for c in UNREADABLE], ids=[c[0] for c in UNREADABLE]
)
def test_a_changed_file_it_cannot_read_counts_as_weakened(
    project: Path, raw: bytes, said: str
) -> None:
    settings_file(project).write_bytes(raw)
    d = decide(project)
    assert d.blocked
    assert f"cannot read the changed file {settings_file(project)}" in (d.reason or "")
    assert said in (d.reason or "")


def test_an_unreadable_file_beside_a_weakened_one_is_named(project: Path) -> None:
    settings_file(project, "settings.local.json").write_text("{oops")
    edit(project, lambda d: d["hooks"].pop("PreToolUse"))
    d = decide(project)
    assert (
        d.blocked
        and "could not read" in (d.reason or "")
        and "settings.local.json" in (d.reason or "")
    )


# --- what goes through -----------------------------------------------------------------------

BENIGN: list[tuple[str, Edit]] = [
    ("nothing changed", lambda d: None),
    (
        "a permission rule added",
        lambda d: d.setdefault("permissions", {}).setdefault("allow", []).append("Bash(ls:*)"),
    ),
    ("an env var added", lambda d: d.update(env={"FOO": "1"})),
    (
        "a hook of the user's beside ours",
        lambda d: d["hooks"]["PreToolUse"].append(
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}
        ),
    ),
    ("events reordered", lambda d: Whole(hooks=dict(reversed(list(d["hooks"].items()))))),
    ("matcher widened to every tool", lambda d: d["hooks"]["PreToolUse"][0].update(matcher="*")),
    ("matcher removed (every tool)", lambda d: d["hooks"]["PreToolUse"][0].pop("matcher")),
    ("the if removed (more calls reach it)", lambda d: ours(d, "PreToolUse").pop("if", None)),
    (
        "a second copy of ours",
        lambda d: d["hooks"]["Stop"].append(copy.deepcopy(d["hooks"]["Stop"][0])),
    ),
    ("disableAllHooks false", lambda d: d.update(disableAllHooks=False)),
    ("a longer timeout", lambda d: ours(d, "PreToolUse").update(timeout=3600)),
    ("the same handler in shell form", lambda d: to_shell(ours(d, "PreToolUse"))),
]


@pytest.mark.parametrize("change", [c for _, c in BENIGN], ids=[n for n, _ in BENIGN])
def test_a_change_that_leaves_the_guard_whole_goes_through(project: Path, change: Edit) -> None:
    edit(project, change)
    d = decide(project)
    assert not d.blocked, d.reason


def test_the_local_settings_may_change_while_the_project_settings_hold_the_guard(
    project: Path,
) -> None:
    edit(project, lambda d: d.update(permissions={"allow": ["Bash(ls:*)"]}), "settings.local.json")
    assert not decide(project, "settings.local.json", "local_settings").blocked


def test_the_guard_may_live_in_the_user_settings(project: Path, tmp_path: Path) -> None:
    project_file = settings_file(project)
    user_file = tmp_path / "home" / ".claude" / "settings.json"
    user_file.parent.mkdir(parents=True)
    install(str(project / "agent.yaml"), scope="user", project_dir=str(project))
    project_file.write_text(json.dumps({"permissions": {"allow": ["Read"]}}))
    assert not decide(project).blocked  # the user's settings still hold every handler
    user_file.write_text("{}")
    assert decide(project, str(user_file), "user_settings").blocked


def test_a_skill_change_is_not_a_settings_change(project: Path) -> None:
    edit(project, lambda d: Whole())
    skill = project / ".claude" / "skills" / "x" / "SKILL.md"
    assert not decide(project, str(skill), "skills").blocked


def test_a_definition_built_in_python_refuses_only_switching_hooks_off(project: Path) -> None:
    from guardrails import AgentDefinition, HookMatcher

    hooks = {"ConfigChange": [HookMatcher(hooks=[protect_guard_settings])]}
    guard = Guard(AgentDefinition(name="sdk", hooks=hooks), ledger=False)
    payload = {
        "session_id": "s",
        "cwd": str(project),
        "hook_event_name": "ConfigChange",
        "source": "project_settings",
        "file_path": str(settings_file(project)),
    }
    edit(project, lambda d: Whole())
    assert not guard.emit_sync(Event.from_claude(payload)).blocked
    edit(project, lambda d: Whole(disableAllHooks=True))
    assert guard.emit_sync(Event.from_claude(payload)).blocked


def test_a_definition_that_binds_the_guard_itself_needs_no_flag(project: Path) -> None:
    text = AGENT + "  ConfigChange:\n    - hooks: [protect_guard_settings]\n"
    (project / "agent.yaml").write_text(text)
    install(str(project / "agent.yaml"), project_dir=str(project), protect_settings=False)
    handler = ours(json.loads(settings_file(project).read_text()), "ConfigChange")
    assert "--protect-settings" not in handler["args"]
    d = decide(project)
    assert not d.blocked, d.reason


def test_a_failure_inside_the_guard_blocks(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import guardrails.builtins.guard_settings as module

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("disk on fire")

    monkeypatch.setattr(module, "deciding_plans", broken)
    d = decide(project)
    assert d.blocked and "could not be checked" in (d.reason or "")


def test_the_hint_can_be_replaced() -> None:
    assert ProtectGuardSettings(hint="Ask Ops.").hint == "Ask Ops."
    with pytest.raises(TypeError):
        ProtectGuardSettings(hint=3)  # type: ignore[arg-type]


def test_no_ledger_is_a_weakening_when_the_install_keeps_a_ledger(
    project: Path, tmp_path: Path
) -> None:
    """The guard's own process records (the install keeps a ledger): a handler that stops
    recording loses the halts, budgets and counts other processes read from it."""
    from guardrails import Ledger

    edit(project, lambda d: ours(d, "PreToolUse")["args"].append("--no-ledger"))
    assert not decide(project).blocked  # a process without a ledger: installed --no-ledger
    definition = load_definition(str(project / "agent.yaml"))
    guard_settings(definition)
    with Ledger(str(tmp_path / "ledger.db")) as ledger:
        guard = Guard(definition, ledger=ledger)
        payload = {
            "session_id": "s1",
            "cwd": str(project),
            "hook_event_name": "ConfigChange",
            "source": "project_settings",
            "file_path": str(settings_file(project)),
        }
        d = guard.emit_sync(Event.from_claude(payload))
    assert d.blocked and "--no-ledger" in (d.reason or "")


def test_an_http_install_with_the_guard_in_the_definition_stays_whole(project: Path) -> None:
    """docs/builtins.md: an http install binds the guard in the definition, and `serve`
    runs it; its handlers are all http ones, which is what install wrote."""
    text = AGENT + "  ConfigChange:\n    - hooks: [protect_guard_settings]\n"
    (project / "agent.yaml").write_text(text)
    settings_file(project).unlink()
    install(str(project / "agent.yaml"), project_dir=str(project), http="http://127.0.0.1:8787")
    edit(project, lambda d: d.update(permissions={"allow": ["Read"]}))
    d = decide(project)
    assert not d.blocked, d.reason
    edit(project, lambda d: d["hooks"].pop("PreToolUse"))
    assert decide(project).blocked
