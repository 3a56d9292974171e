"""Agent definitions: Python, YAML, TOML and JSON agree; hook references resolve;
bad definitions fail with one located line; the published JSON Schema matches."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import threading
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from guardrails import AgentDefinition, Guard, HookMatcher, ToolSpec
from guardrails.builtins import BUILTINS, Deny
from guardrails.cli.main import cli
from guardrails.definition.hook_refs import CommandHook, HttpHook, resolve_hook
from guardrails.errors import DefinitionError
from tests._paths import FIXTURES_DIR, REPO
from tools.schemagen import generated

ROOT = REPO
FIXTURES = FIXTURES_DIR / "definitions"
EXAMPLE = ROOT / "examples" / "agent.yaml"
SCHEMA_FILE = ROOT / "schemas" / "agent-definition.schema.json"
FORMATS = ("yaml", "toml", "json")


def allow_all(event: Any, ctx: Any) -> None:
    return None


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# --- one definition, four spellings -------------------------------------------


@pytest.fixture
def defs(tmp_path: Path) -> Path:
    """A copy of the fixture definitions (and the hooks module beside them)."""
    return Path(shutil.copytree(FIXTURES, tmp_path / "defs"))


@pytest.fixture
def policy_hooks(defs: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The copied hooks module, importable as ``policy_hooks`` for this test only."""
    spec = importlib.util.spec_from_file_location("policy_hooks", defs / "policy_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "policy_hooks", module)
    return module


def python_definition(policy_hooks: ModuleType) -> AgentDefinition:
    """The fixture files' definition, written in Python."""
    return AgentDefinition(
        name="fixture-agent",
        description="Runs shell commands and writes files.",
        tools={
            "Bash": ToolSpec(side_effects=True, primary_arg="command"),
            "Write": ToolSpec(side_effects=True),
        },
        hooks={
            "PreToolUse": [
                HookMatcher(
                    matcher="Bash(git push --force*)|Bash(git push -f*)",
                    priority=10,
                    hooks=[policy_hooks.no_force_push],
                ),
                HookMatcher(
                    matcher="Bash(rm -rf *)",
                    priority=20,
                    hooks=[Deny("destructive command", hint="Remove files one by one.")],
                ),
                HookMatcher(
                    matcher="Write(.env*)",
                    hooks=[
                        {
                            "use": "policy_hooks:deny_from_config",
                            "with": {"reason": "secrets files are read-only"},
                        }
                    ],
                ),
                HookMatcher(
                    matcher="Bash(git *)",
                    priority=200,
                    timeout=2.5,
                    on_failure="continue",
                    hooks=["allow"],
                ),
            ],
            "UserPromptSubmit": [
                HookMatcher(hooks=[{"use": "inject", "with": {"text": "House style: be brief."}}])
            ],
            "AgentStop": [HookMatcher(hooks=[{"command": "exit 0", "timeout": 10}])],
        },
    )


def build(fmt: str, defs: Path, policy_hooks: ModuleType) -> AgentDefinition:
    if fmt == "python":
        return python_definition(policy_hooks)
    return AgentDefinition.from_file(defs / f"agent.{fmt}")


def summary(defn: AgentDefinition) -> dict[str, Any]:
    """What must agree between spellings: tools, events, patterns, order, hooks."""
    return {
        "name": defn.name,
        "tools": {n: (t.side_effects, t.primary_arg, t.arg_kind) for n, t in defn.tools.items()},
        "hooks": {
            event: [
                (
                    m.pattern.source,
                    m.priority,
                    m.timeout,
                    m.on_failure,
                    [(h.name, h.kind, h.privileged, h.timeout, h.config) for h in m.resolved],
                )
                for m in matchers
            ]
            for event, matchers in defn.hooks.items()
        },
    }


@pytest.mark.parametrize("fmt", FORMATS)
def test_file_formats_build_the_same_definition_as_python(
    fmt: str, defs: Path, policy_hooks: ModuleType
) -> None:
    assert summary(build(fmt, defs, policy_hooks)) == summary(python_definition(policy_hooks))


def test_stop_in_a_file_binds_the_agentstop_event(defs: Path, policy_hooks: ModuleType) -> None:
    defn = AgentDefinition.from_file(defs / "agent.yaml")
    assert list(defn.hooks) == ["PreToolUse", "UserPromptSubmit", "AgentStop"]


CALLS: list[tuple[str, dict[str, Any], str, str | None]] = [
    ("Bash", {"command": "git push --force origin main"}, "deny", "force-push is not allowed"),
    ("Bash", {"command": "git push -f"}, "deny", "force-push is not allowed"),
    ("Bash", {"command": "rm -rf build"}, "deny", "destructive command"),
    ("Write", {"file_path": ".env.local"}, "deny", "secrets files are read-only"),
    ("Bash", {"command": "git status"}, "allow", None),
    ("Bash", {"command": "ls"}, "allow", None),
]


@pytest.mark.parametrize("fmt", [*FORMATS, "python"])
@pytest.mark.parametrize(
    ("tool", "tool_input", "decision", "reason"),
    CALLS,
    ids=[f"{tool}({next(iter(args.values()))})" for tool, args, _, _ in CALLS],
)
def test_every_spelling_decides_tool_calls_alike(
    fmt: str,
    tool: str,
    tool_input: dict[str, Any],
    decision: str,
    reason: str | None,
    defs: Path,
    policy_hooks: ModuleType,
) -> None:
    d = Guard(build(fmt, defs, policy_hooks)).sync.pre_tool_use(tool, tool_input)
    assert (d.decision, (d.reason or "").partition("\n")[0] or None) == (decision, reason)


@pytest.mark.parametrize("fmt", [*FORMATS, "python"])
def test_every_spelling_injects_the_same_prompt_context(
    fmt: str, defs: Path, policy_hooks: ModuleType
) -> None:
    d = Guard(build(fmt, defs, policy_hooks)).sync.user_prompt_submit("hello")
    assert d.additional_context == "House style: be brief."


# --- hook references ------------------------------------------------------------


def test_builtin_name_resolves_to_the_builtin_class_with_its_defaults() -> None:
    hook = resolve_hook("deny")
    assert (type(hook.fn), hook.name, hook.fn.reason) == (Deny, "deny", "denied by policy")


def test_builtin_name_in_a_file_denies_matching_calls(tmp_path: Path) -> None:
    path = write(
        tmp_path, "agent.yaml", "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: [deny]\n"
    )
    assert Guard(path).sync.pre_tool_use("Bash", {"command": "ls"}).decision == "deny"


def test_module_function_beside_the_definition_is_imported(tmp_path: Path) -> None:
    write(
        tmp_path,
        "beside_hooks.py",
        "from guardrails import HookResult\n\n"
        "def check(event, ctx):\n    return HookResult.deny('beside says no')\n",
    )
    path = write(
        tmp_path, "agent.yaml", "hooks:\n  PreToolUse:\n    - hooks: [beside_hooks:check]\n"
    )
    assert Guard(path).sync.pre_tool_use("Bash", {"command": "ls"}).reason == "beside says no"


def test_definition_folder_is_off_sys_path_after_loading(tmp_path: Path) -> None:
    write(tmp_path, "beside_hooks.py", "def check(event, ctx):\n    return None\n")
    path = write(
        tmp_path, "agent.yaml", "hooks:\n  PreToolUse:\n    - hooks: [beside_hooks:check]\n"
    )
    AgentDefinition.from_file(path)
    assert str(tmp_path) not in sys.path


def test_same_module_name_beside_two_definitions_resolves_to_each_own(tmp_path: Path) -> None:
    guards = []
    for team in ("red", "blue"):
        folder = tmp_path / team
        folder.mkdir()
        write(
            folder,
            "team_hooks.py",
            "from guardrails import HookResult\n\n"
            f"def check(event, ctx):\n    return HookResult.deny('{team} says no')\n",
        )
        definition = "hooks:\n  PreToolUse:\n    - hooks: [team_hooks:check]\n"
        guards.append(Guard(write(folder, "agent.yaml", definition)))
    reasons = [g.sync.pre_tool_use("Bash", {"command": "ls"}).reason for g in guards]
    assert reasons == ["red says no", "blue says no"]


def test_use_with_constructs_a_builtin_class_with_the_params() -> None:
    hook = resolve_hook({"use": "deny", "with": {"reason": "no", "hint": "try again"}})
    assert (type(hook.fn), hook.fn.reason, hook.fn.hint) == (Deny, "no", "try again")


def test_use_with_gives_a_plain_function_its_params_as_ctx_config(tmp_path: Path) -> None:
    write(
        tmp_path,
        "config_hooks.py",
        "from guardrails import HookResult\n\n"
        "def check(event, ctx):\n    return HookResult.deny(f\"limit is {ctx.config['limit']}\")\n",
    )
    path = write(
        tmp_path,
        "agent.yaml",
        "hooks:\n  PreToolUse:\n    - hooks:\n        - use: config_hooks:check\n"
        "          with: {limit: 3}\n",
    )
    assert Guard(path).sync.pre_tool_use("Bash", {"command": "ls"}).reason == "limit is 3"


def test_command_hook_resolves_unprivileged_with_its_timeout() -> None:
    hook = resolve_hook({"command": "exit 0", "timeout": 3})
    assert (type(hook.fn), hook.kind, hook.privileged, hook.timeout, hook.name) == (
        CommandHook,
        "command",
        False,
        3,
        "command:exit 0",
    )


def test_command_hook_marked_privileged_is_privileged() -> None:
    assert resolve_hook({"command": "exit 0", "privileged": True}).privileged is True


def test_command_hook_exit_2_denies_with_its_stderr_run_beside_the_definition(
    tmp_path: Path,
) -> None:
    write(tmp_path, "policy.sh", "cat > /dev/null\necho 'policy script says no' >&2\nexit 2\n")
    path = write(
        tmp_path,
        "agent.yaml",
        "hooks:\n  PreToolUse:\n    - hooks:\n        - command: sh policy.sh\n",
    )
    d = Guard(path).sync.pre_tool_use("Bash", {"command": "ls"})
    assert (d.decision, d.reason) == ("deny", "policy script says no")


def test_http_hook_resolves_unprivileged_with_its_headers() -> None:
    hook = resolve_hook({"http": "http://127.0.0.1:9/hook", "headers": {"X-Team": "red"}})
    assert (type(hook.fn), hook.kind, hook.privileged, hook.fn.headers) == (
        HttpHook,
        "http",
        False,
        {"X-Team": "red"},
    )


class _DenyingHandler(BaseHTTPRequestHandler):
    received: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        type(self).received.append(json.loads(self.rfile.read(length)))
        body = json.dumps(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "the server says no",
                }
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def hook_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    received: list[dict[str, Any]] = []
    handler = type("Handler", (_DenyingHandler,), {"received": received})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_http_hook_posts_the_event_and_applies_the_answer(
    tmp_path: Path, hook_server: tuple[str, list[dict[str, Any]]]
) -> None:
    url, received = hook_server
    path = write(
        tmp_path, "agent.yaml", f"hooks:\n  PreToolUse:\n    - hooks:\n        - http: {url}\n"
    )
    d = Guard(path).sync.pre_tool_use("Bash", {"command": "ls"})
    assert (d.decision, d.reason, received[0]["tool_input"]) == (
        "deny",
        "the server says no",
        {"command": "ls"},
    )


# --- bad definitions --------------------------------------------------------------


@dataclass(frozen=True)
class Bad:
    """A bad definition file and what its error must say."""

    id: str
    fmt: str  # the file's extension
    text: str | bytes | None  # None: no file at all
    says: tuple[str, ...]  # substrings of the message (what is wrong, what was expected)
    path: str  # DefinitionError.path: where inside the file
    line: int | None  # None where there is no line to give
    beside: tuple[tuple[str, str], ...] = ()  # other files in the definition's folder


BAD = [
    Bad(
        "unknown-event",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks: [deny]\n  PreToolUze:\n    - hooks: [deny]\n",
        ("unknown event 'PreToolUze'", "expected PreToolUse, PostToolUse"),
        "hooks.PreToolUze",
        4,
    ),
    Bad(
        "glob-unbalanced-paren",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks: [allow]\n    - matcher: Bash(git push\n"
        "      hooks: [deny]\n",
        ("unclosed '('", "'Bash(git push'"),
        "hooks.PreToolUse[1].matcher",
        4,
    ),
    Bad(
        "glob-empty-alternative",
        "yaml",
        "hooks:\n  PreToolUse:\n    - matcher: Read||Write\n      hooks: [deny]\n",
        ("empty alternative in 'Read||Write'", "expected names between '|'"),
        "hooks.PreToolUse[0].matcher",
        3,
    ),
    Bad(
        "glob-unbalanced-paren-json",
        "json",
        '{\n  "hooks": {\n    "PreToolUse": [\n      {"hooks": ["allow"]},\n'
        '      {"matcher": "Write(src/**",\n       "hooks": ["deny"]}\n    ]\n  }\n}\n',
        ("unclosed '('",),
        "hooks.PreToolUse[1].matcher",
        5,
    ),
    Bad(
        "glob-in-tab-indented-json",
        "json",
        '{\n\t"hooks": {\n\t\t"PreToolUse": [\n\t\t\t{"matcher": "Read||Write", "hooks": ["deny"]}'
        "\n\t\t]\n\t}\n}\n",
        ("empty alternative",),
        "hooks.PreToolUse[0].matcher",
        4,
    ),
    Bad(
        "regex-invalid",
        "yaml",
        "hooks:\n  PreToolUse:\n    - matcher: 're:Bash(git'\n      hooks: [deny]\n",
        ("invalid regex 'Bash(git'", "expected a Python regular expression"),
        "hooks.PreToolUse[0].matcher",
        3,
    ),
    Bad(
        "module-not-importable",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks: [allow]\n    - hooks:\n        - allow\n"
        "        - no_such_module_xyz:check\n",
        ("cannot import module 'no_such_module_xyz'", "expected an importable"),
        "hooks.PreToolUse[1].hooks[1]",
        6,
    ),
    Bad(
        "module-raises-on-import",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks: [broken_hooks:check]\n",
        ("cannot import module 'broken_hooks'", "RuntimeError: half-written", "expected"),
        "hooks.PreToolUse[0].hooks[0]",
        3,
        (("broken_hooks.py", "raise RuntimeError('half-written\\nmodule')\n"),),
    ),
    Bad(
        "module-exits-on-import",
        "yaml",
        "name: a\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: [exiting_hooks:h]\n",
        ("cannot import module 'exiting_hooks'", "importing it raised SystemExit(0)"),
        "hooks.PreToolUse[0].hooks[0]",
        5,
        (("exiting_hooks.py", "import sys\nsys.exit(0)\ndef h(event, ctx):\n    return None\n"),),
    ),
    Bad(
        "module-exits-with-a-message-on-import",
        "json",
        '{"hooks": {"Stop": [\n  {"hooks": ["quitting_hooks:h"]}]}}\n',
        ("cannot import module 'quitting_hooks'", "SystemExit('no config')"),
        "hooks.Stop[0].hooks[0]",
        2,
        (("quitting_hooks.py", "raise SystemExit('no config')\n"),),
    ),
    Bad(
        "module-syntax-error",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks: [typo_hooks:check]\n",
        ("cannot import module 'typo_hooks'", "SyntaxError"),
        "hooks.PreToolUse[0].hooks[0]",
        3,
        (("typo_hooks.py", "def check(event, ctx:\n"),),
    ),
    Bad(
        "module-missing-attribute",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks: [local_hooks:chekc]\n",
        ("module 'local_hooks' has no attribute 'chekc'", "expected an importable"),
        "hooks.PreToolUse[0].hooks[0]",
        3,
        (("local_hooks.py", "def check(event, ctx):\n    return None\n"),),
    ),
    Bad(
        "builtin-unknown",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks: [denyy]\n",
        ("unknown hook 'denyy'", "expected a built-in (" + ", ".join(sorted(BUILTINS)) + ")"),
        "hooks.PreToolUse[0].hooks[0]",
        3,
    ),
    Bad(
        "priority-string",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks: [deny]\n      priority: high\n",
        ("got 'high'", "expected an integer"),
        "hooks.PreToolUse[0].priority",
        4,
    ),
    Bad(
        "priority-numeric-string-toml",
        "toml",
        '[[hooks.PreToolUse]]\nhooks = ["deny"]\npriority = "10"\n',
        ("got '10'", "expected an integer"),
        "hooks.PreToolUse[0].priority",
        None,
    ),
    Bad(
        "priority-boolean",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks: [deny]\n      priority: true\n",
        ("got True", "expected an integer"),
        "hooks.PreToolUse[0].priority",
        4,
    ),
    Bad(
        "hooks-not-a-list",
        "yaml",
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: deny\n",
        ("got 'deny'", "expected a list"),
        "hooks.PreToolUse[0].hooks",
        4,
    ),
    Bad(
        "matcher-number-json",
        "json",
        '{\n  "hooks": {\n    "PreToolUse": [\n      {\n        "matcher": 5,\n'
        '        "hooks": ["deny"]\n      }\n    ]\n  }\n}\n',
        ("got 5", "expected a string"),
        "hooks.PreToolUse[0].matcher",
        5,
    ),
    Bad(
        "side-effects-string",
        "yaml",
        "tools:\n  Bash: {side_effects: 'yes'}\n",
        ("got 'yes'", "expected true or false"),
        "tools.Bash.side_effects",
        2,
    ),
    Bad(
        "unknown-key-top-level",
        "yaml",
        "name: demo\nhook:\n  PreToolUse: []\n",
        ("unknown key 'hook'", "expected one of", "hooks"),
        "hook",
        2,
    ),
    Bad(
        "unknown-key-in-matcher",
        "yaml",
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      prority: 10\n      hooks: [deny]\n",
        ("unknown key 'prority'", "priority"),
        "hooks.PreToolUse[0].prority",
        4,
    ),
    Bad(
        "unknown-key-in-hook-mapping",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks:\n        - use: deny\n          wiht: {reason: no}\n",
        ("unknown key 'wiht'", "expected one of name, timeout, use, with"),
        "hooks.PreToolUse[0].hooks[0].wiht",
        5,
    ),
    Bad(
        "hook-mapping-with-two-kinds",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks:\n        - {use: deny, command: exit 2}\n",
        ("exactly one of 'use', 'command' or 'http'",),
        "hooks.PreToolUse[0].hooks[0].command",
        4,
    ),
    Bad(
        "hook-not-a-name-or-mapping",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks: [42]\n",
        ("cannot use 42 as a hook", "expected a built-in name"),
        "hooks.PreToolUse[0].hooks[0]",
        3,
    ),
    Bad(
        "timeout-negative",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks: [deny]\n      timeout: -1\n",
        ("got -1", "expected a number greater than 0"),
        "hooks.PreToolUse[0].timeout",
        4,
    ),
    Bad(
        "timeout-zero-on-a-hook",
        "json",
        '{"hooks": {"PreToolUse": [\n  {"hooks": [\n    {"command": "exit 0", "timeout": 0}\n'
        "  ]}\n]}}\n",
        ("got 0", "expected a number greater than 0"),
        "hooks.PreToolUse[0].hooks[0].timeout",
        3,
    ),
    Bad(
        "command-empty",
        "yaml",
        "hooks:\n  Stop:\n    - hooks:\n        - command: '   '\n",
        ("command hook has an empty command", "expected a shell command"),
        "hooks.Stop[0].hooks[0].command",
        4,
    ),
    Bad(
        "http-not-http",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks:\n        - http: ftp://hooks.example/check\n",
        ("'ftp://hooks.example/check' is not http(s)", "expected an http:// or https:// URL"),
        "hooks.PreToolUse[0].hooks[0].http",
        4,
    ),
    Bad(
        "with-param-not-accepted",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks:\n        - use: deny\n          with: {reson: typo}\n",
        ("cannot configure 'deny'", "'reson'", "expected the parameters it accepts"),
        "hooks.PreToolUse[0].hooks[0].with",
        5,
    ),
    Bad(
        "with-param-rejected-by-class",
        "yaml",
        "hooks:\n  UserPromptSubmit:\n    - hooks:\n        - use: inject\n"
        "          with: {text: ''}\n",
        ("cannot configure 'inject'", "text must be a non-empty string"),
        "hooks.UserPromptSubmit[0].hooks[0].with",
        5,
    ),
    Bad(
        "on-failure-invalid",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks: [deny]\n      on_failure: ignore\n",
        ("got 'ignore'", "expected 'block' or 'continue'"),
        "hooks.PreToolUse[0].on_failure",
        4,
    ),
    Bad(
        "hooks-list-empty",
        "yaml",
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: []\n",
        ("a matcher needs at least one hook",),
        "hooks.PreToolUse[0].hooks",
        4,
    ),
    Bad(
        "injection-budget-negative-toml",
        "toml",
        "injection_budget = -1\n",
        ("got -1", "expected a number of at least 0"),
        "injection_budget",
        None,
    ),
    Bad(
        "duplicate-event-yaml",
        "yaml",
        "hooks:\n  PreToolUse:\n    - hooks: [deny]\n  PreToolUse:\n    - hooks: [allow]\n",
        ("duplicate key 'PreToolUse'",),
        "hooks.PreToolUse",
        4,
    ),
    Bad(
        "duplicate-event-json",
        "json",
        '{"hooks": {\n  "PreToolUse": [{"hooks": ["deny"]}],\n'
        '  "PreToolUse": [{"hooks": ["allow"]}]\n}}\n',
        ("duplicate key 'PreToolUse'",),
        "hooks.PreToolUse",
        3,
    ),
    Bad(
        "top-level-not-a-mapping",
        "yaml",
        "- hooks: [deny]\n",
        ("expected a mapping at the top level, got list",),
        "",
        None,
    ),
    Bad(
        "yaml-syntax",
        "yaml",
        "name: demo\nhooks:\n  PreToolUse:\n    - matcher: Bash\n     hooks: [deny]\n",
        ("invalid YAML",),
        "",
        5,
    ),
    Bad(
        "yaml-control-character",
        "yaml",
        "name: demo\ndescription: bell \x07 here\n",
        ("invalid YAML", "unacceptable character #x0007"),
        "",
        2,
    ),
    Bad(
        "not-utf8",
        "yaml",
        b"name: demo\ndescription: caf\xe9\n",
        ("not UTF-8 text",),
        "",
        2,
    ),
    Bad(
        "json-syntax",
        "json",
        '{\n  "name": "demo",\n  "hooks": {},\n}\n',
        ("invalid JSON",),
        "",
        4,
    ),
    Bad(
        "toml-syntax",
        "toml",
        'name = "demo"\n[hooks\n',
        ("invalid TOML",),
        "",
        2,
    ),
    Bad(
        "unknown-event-toml",
        "toml",
        '[[hooks.OnToolUse]]\nhooks = ["deny"]\n',
        ("unknown event 'OnToolUse'",),
        "hooks.OnToolUse",
        None,
    ),
    Bad(
        "unsupported-extension",
        "ini",
        "[hooks]\n",
        ("unsupported file type '.ini'", "expected .yaml, .yml, .toml or .json"),
        "",
        None,
    ),
    Bad("missing-file", "yaml", None, ("file not found",), "", None),
]


def bad_file(case: Bad, folder: Path) -> Path:
    for name, text in case.beside:
        write(folder, name, text)
    path = folder / f"agent.{case.fmt}"
    if case.text is not None:
        write(folder, path.name, case.text)
    return path


def load_error(case: Bad, folder: Path) -> tuple[DefinitionError, Path]:
    path = bad_file(case, folder)
    with pytest.raises(DefinitionError) as info:
        AgentDefinition.from_file(path)
    return info.value, path


by_id = pytest.mark.parametrize("case", BAD, ids=[c.id for c in BAD])


@by_id
def test_bad_definition_error_names_the_file(case: Bad, tmp_path: Path) -> None:
    err, path = load_error(case, tmp_path)
    assert (err.file, str(err).startswith(str(path))) == (str(path), True)


@by_id
def test_bad_definition_error_names_the_path_inside_the_file(case: Bad, tmp_path: Path) -> None:
    err, _ = load_error(case, tmp_path)
    assert err.path == case.path
    assert f": {case.path}: " in str(err) or not case.path


@by_id
def test_bad_definition_error_gives_the_line(case: Bad, tmp_path: Path) -> None:
    err, path = load_error(case, tmp_path)
    assert err.line == case.line
    assert str(err).startswith(f"{path}:{case.line}: ") or case.line is None


@by_id
def test_bad_definition_error_says_what_is_wrong_and_expected(case: Bad, tmp_path: Path) -> None:
    err, _ = load_error(case, tmp_path)
    assert [s for s in case.says if s not in str(err)] == []


@by_id
def test_bad_definition_error_is_one_line(case: Bad, tmp_path: Path) -> None:
    err, _ = load_error(case, tmp_path)
    assert "\n" not in str(err)


@by_id
def test_cli_check_reports_a_bad_definition_on_one_line_and_exits_1(
    case: Bad, tmp_path: Path
) -> None:
    path = bad_file(case, tmp_path)
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert isinstance(result.exception, SystemExit)  # a clean exit, not an escaped error
    assert (result.exit_code, result.output.count("\n")) == (1, 1)
    assert result.output.startswith(f"error: {path}")
    assert case.path in result.output
    assert "Traceback" not in result.output


# --- bad definitions built in Python ---------------------------------------------

PY_BAD: list[tuple[str, Callable[[], object], str, tuple[str, ...]]] = [
    (
        "matcher-of-a-hookmatcher",
        lambda: AgentDefinition(
            hooks={"PreToolUse": [HookMatcher(matcher="Bash(", hooks=[allow_all])]}
        ),
        "matcher",
        ("unclosed '(' in pattern 'Bash('",),
    ),
    (
        "matcher-of-a-mapping",
        lambda: AgentDefinition(
            hooks={"PreToolUse": [{"hooks": [allow_all]}, {"matcher": "Bash(", "hooks": ["deny"]}]}
        ),
        "hooks.PreToolUse[1].matcher",
        ("unclosed '('",),
    ),
    (
        "unknown-event",
        lambda: AgentDefinition(hooks={"Nope": [HookMatcher(hooks=[allow_all])]}),
        "hooks.Nope",
        ("unknown event 'Nope'", "expected PreToolUse"),
    ),
    (
        "hooks-not-a-mapping",
        lambda: AgentDefinition(hooks=[HookMatcher(hooks=[allow_all])]),
        "hooks",
        ("hooks must be a mapping, got list",),
    ),
    (
        "matchers-not-a-list",
        lambda: AgentDefinition(hooks={"PreToolUse": HookMatcher(hooks=[allow_all])}),
        "hooks.PreToolUse",
        ("expected a list of matchers, got HookMatcher",),
    ),
    (
        "unknown-key-in-matcher-mapping",
        lambda: AgentDefinition(hooks={"PreToolUse": [{"matchr": "Bash", "hooks": ["deny"]}]}),
        "hooks.PreToolUse[0].matchr",
        ("unknown key 'matchr'", "matcher"),
    ),
    (
        "tools-not-a-mapping",
        lambda: AgentDefinition(tools=["Bash"]),
        "tools",
        ("tools must be a mapping",),
    ),
    (
        "unknown-key-in-tool-mapping",
        lambda: AgentDefinition(tools={"Bash": {"side_effect": True}}),
        "tools.Bash.side_effect",
        ("unknown key 'side_effect'", "side_effects"),
    ),
    (
        "tool-arg-kind",
        lambda: ToolSpec(arg_kind="dir"),
        "arg_kind",
        ("arg_kind must be 'path' or 'text'",),
    ),
    (
        "hooks-list-empty",
        lambda: HookMatcher(matcher="Bash", hooks=[]),
        "hooks",
        ("a matcher needs at least one hook",),
    ),
    (
        "hooks-not-a-list",
        lambda: HookMatcher(hooks=allow_all),
        "hooks",
        ("hooks must be a list, got function",),
    ),
    (
        "hook-not-callable",
        lambda: HookMatcher(hooks=[allow_all, 42]),
        "hooks[1]",
        ("cannot use 42 as a hook",),
    ),
    (
        "builtin-unknown",
        lambda: HookMatcher(hooks=["denyy"]),
        "hooks[0]",
        ("unknown hook 'denyy'",),
    ),
    (
        "module-not-importable",
        lambda: HookMatcher(hooks=["no_such_module_xyz:check"]),
        "hooks[0]",
        ("cannot import module 'no_such_module_xyz'",),
    ),
    (
        "priority-boolean",
        lambda: HookMatcher(hooks=[allow_all], priority=True),
        "priority",
        ("priority must be an integer, got True",),
    ),
    (
        "timeout-zero",
        lambda: HookMatcher(hooks=[allow_all], timeout=0),
        "timeout",
        ("timeout must be a positive number of seconds, got 0",),
    ),
    (
        "hook-timeout-boolean",
        lambda: HookMatcher(hooks=[{"command": "exit 0", "timeout": True}]),
        "hooks[0].timeout",
        ("timeout must be a positive number, got True",),
    ),
    (
        "on-failure-invalid",
        lambda: HookMatcher(hooks=[allow_all], on_failure="ignore"),
        "on_failure",
        ("on_failure must be 'block' or 'continue', got 'ignore'",),
    ),
    (
        "agents-not-a-list",
        lambda: HookMatcher(hooks=[allow_all], agents="researcher"),
        "agents",
        ("agents must be a list of globs",),
    ),
    (
        "command-empty",
        lambda: HookMatcher(hooks=[{"command": "  "}]),
        "hooks[0].command",
        ("'command' must be a non-empty string",),
    ),
    (
        "privileged-string",
        lambda: HookMatcher(hooks=[{"command": "exit 0", "privileged": "false"}]),
        "hooks[0].privileged",
        ("privileged must be true or false, got 'false'",),
    ),
    (
        "http-not-http",
        lambda: HookMatcher(hooks=[{"http": "file:///etc/passwd"}]),
        "hooks[0].http",
        ("is not http(s)", "expected an http:// or https:// URL"),
    ),
    (
        "http-headers-not-strings",
        lambda: HookMatcher(hooks=[{"http": "http://127.0.0.1/h", "headers": {"X-Id": 7}}]),
        "hooks[0].headers",
        ("headers must map header names to strings",),
    ),
    (
        "with-param-not-accepted",
        lambda: HookMatcher(hooks=[{"use": "deny", "with": {"reson": "typo"}}]),
        "hooks[0].with",
        ("cannot configure 'deny'", "'reson'"),
    ),
    (
        "injection-budget-negative",
        lambda: AgentDefinition(injection_budget=-1),
        "injection_budget",
        ("injection_budget must be a non-negative integer, got -1",),
    ),
    (
        "event-budget-boolean",
        lambda: AgentDefinition(event_budget=True),
        "event_budget",
        ("event_budget must be positive seconds, got True",),
    ),
]
py_by_id = pytest.mark.parametrize(
    ("build_it", "path", "says"), [c[1:] for c in PY_BAD], ids=[c[0] for c in PY_BAD]
)


@py_by_id
def test_python_definition_error_names_the_path(
    build_it: Callable[[], object], path: str, says: tuple[str, ...]
) -> None:
    with pytest.raises(DefinitionError) as info:
        build_it()
    assert (info.value.path, info.value.file, info.value.line) == (path, None, None)


@py_by_id
def test_python_definition_error_says_what_is_wrong(
    build_it: Callable[[], object], path: str, says: tuple[str, ...]
) -> None:
    with pytest.raises(DefinitionError) as info:
        build_it()
    assert [s for s in says if s not in str(info.value)] == []


@py_by_id
def test_python_definition_error_is_one_line(
    build_it: Callable[[], object], path: str, says: tuple[str, ...]
) -> None:
    with pytest.raises(DefinitionError) as info:
        build_it()
    assert "\n" not in str(info.value)


def test_from_dict_reports_the_path_like_a_file_does() -> None:
    data = {"hooks": {"PreToolUse": [{"matcher": "Bash(", "hooks": ["deny"]}]}}
    with pytest.raises(DefinitionError) as info:
        AgentDefinition.from_dict(data)
    assert (info.value.path, info.value.file) == ("hooks.PreToolUse[0].matcher", None)


# --- hookrails check ------------------------------------------------------------------


def test_cli_check_example_exits_0_and_lists_its_bindings() -> None:
    result = CliRunner().invoke(cli, ["check", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"ok: {EXAMPLE}: agent 'researcher'")
    assert "-> hooks:no_force_push" in result.stdout


def test_cli_check_example_has_no_warnings() -> None:
    assert CliRunner().invoke(cli, ["check", str(EXAMPLE)]).stderr == ""


UNMATCHED = """\
tools:
  Bash: {side_effects: true}
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [allow]
    - matcher: "Bassh(rm *)"
      hooks: [deny]
"""


def test_cli_check_warns_on_stderr_about_a_matcher_matching_no_declared_tool(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "agent.yaml", UNMATCHED)
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 0
    assert result.stderr.startswith(f"warning: {path}:7: hooks.PreToolUse[1].matcher 'Bassh(rm *)'")
    assert "warning" not in result.stdout


def test_cli_check_does_not_warn_when_every_matcher_matches_a_tool(tmp_path: Path) -> None:
    path = write(tmp_path, "agent.yaml", UNMATCHED.replace("Bassh", "Bash"))
    assert CliRunner().invoke(cli, ["check", str(path)]).stderr == ""


# --- the JSON Schema ------------------------------------------------------------------


def definition_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def test_checked_in_definition_schema_is_generated_from_the_models() -> None:
    assert definition_schema() == generated()["agent-definition.schema.json"], (
        f"{SCHEMA_FILE.relative_to(ROOT)} is out of date: run `make schemas`"
    )


def test_example_definition_validates_against_the_schema() -> None:
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    assert list(Draft202012Validator(definition_schema()).iter_errors(data)) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_fixture_definitions_validate_against_the_schema(fmt: str) -> None:
    text = (FIXTURES / f"agent.{fmt}").read_text(encoding="utf-8")
    loads: dict[str, Callable[[str], Any]] = {
        "yaml": yaml.safe_load,
        "json": json.loads,
        "toml": tomllib.loads,
    }
    data = loads[fmt](text)
    assert list(Draft202012Validator(definition_schema()).iter_errors(data)) == []


def _one_matcher(**fields: Any) -> dict[str, Any]:
    return {"hooks": {"PreToolUse": [{"hooks": ["deny"], **fields}]}}


SCHEMA_BAD: list[tuple[str, dict[str, Any]]] = [
    ("unknown-event", {"hooks": {"PreToolUze": [{"hooks": ["deny"]}]}}),
    ("unknown-top-level-key", {"hook": {}}),
    ("unknown-matcher-key", _one_matcher(prority=1)),
    ("priority-string", _one_matcher(priority="10")),
    ("priority-boolean", _one_matcher(priority=True)),
    ("matcher-number", _one_matcher(matcher=5)),
    ("timeout-zero", _one_matcher(timeout=0)),
    ("on-failure-invalid", _one_matcher(on_failure="ignore")),
    ("hooks-empty", {"hooks": {"PreToolUse": [{"hooks": []}]}}),
    ("hooks-not-a-list", {"hooks": {"PreToolUse": [{"hooks": "deny"}]}}),
    ("hook-empty-name", {"hooks": {"PreToolUse": [{"hooks": [""]}]}}),
    ("command-blank", {"hooks": {"Stop": [{"hooks": [{"command": "  "}]}]}}),
    ("http-not-http", {"hooks": {"Stop": [{"hooks": [{"http": "ftp://x/y"}]}]}}),
    ("hook-mapping-unknown-key", {"hooks": {"Stop": [{"hooks": [{"use": "deny", "wiht": {}}]}]}}),
    ("side-effects-string", {"tools": {"Bash": {"side_effects": "yes"}}}),
    ("injection-budget-negative", {"injection_budget": -1}),
]
schema_by_id = pytest.mark.parametrize(
    "data", [c[1] for c in SCHEMA_BAD], ids=[c[0] for c in SCHEMA_BAD]
)


@schema_by_id
def test_schema_rejects_a_bad_definition(data: dict[str, Any]) -> None:
    assert not Draft202012Validator(definition_schema()).is_valid(data)


@schema_by_id
def test_loader_rejects_what_the_schema_rejects(data: dict[str, Any]) -> None:
    with pytest.raises(DefinitionError):
        AgentDefinition.from_dict(data)
