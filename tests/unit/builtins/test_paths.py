"""``protect_paths``: the agent may not change secrets or repository internals.

Every test uses a real temporary project (``tmp_path`` is the event's cwd), so
``..``, symlinks and directories resolve as they would on disk. Nothing is
written through the tools: a denied call never reaches the (spy) tool, and
shell commands are only parsed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, DefinitionError, Guard, PreToolUse
from guardrails.builtins import ProtectPaths, protect_paths
from guardrails.builtins.paths import DEFAULT_PROTECTED_PATHS
from guardrails.definition.model import ToolSpec
from guardrails.testing import SpyTool
from tests._guards import build_guard


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project: a repo, secrets, code, an example env file, Claude Code settings."""
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (tmp_path / "config").mkdir()
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "server.pem").write_text("key\n", encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print(1)\n", encoding="utf-8")
    (tmp_path / ".env").write_text("TOKEN=x\n", encoding="utf-8")
    (tmp_path / ".env.example").write_text("TOKEN=\n", encoding="utf-8")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text('{"hooks": {}}\n', encoding="utf-8")
    return tmp_path


def guard(cwd: Path, hook: Any = protect_paths, **tools: ToolSpec) -> Guard:
    return build_guard([hook], tools=dict(tools), cwd=cwd, ledger=False)


def edit_input(tool: str, path: str) -> dict[str, Any]:
    if tool == "NotebookEdit":
        return {"notebook_path": path, "new_source": "x"}
    if tool == "Edit":
        return {"file_path": path, "old_string": "a", "new_string": "b"}
    if tool == "MultiEdit":
        return {"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]}
    return {"file_path": path, "content": "x"}


def verdict(cwd: Path, tool: str, tool_input: dict[str, Any], hook: Any = protect_paths) -> str:
    return guard(cwd, hook).sync.pre_tool_use(tool, tool_input).decision


EDIT_TOOLS = ["Write", "Edit", "MultiEdit", "NotebookEdit"]

PROTECTED = [
    ("env", ".env"),
    ("env-in-subdir", "config/.env.local"),
    ("env-production", "deploy/prod/.env.production"),
    ("pem", "keys/server.pem"),
    ("new-pem", "certs/new.pem"),
    ("ssh-key", "home/.ssh/id_rsa"),
    ("ssh-key-ed25519", "home/.ssh/id_ed25519"),
    ("git-config", ".git/config"),
    ("new-git-hook", ".git/hooks/pre-commit"),
    ("dot-slash", "./.env"),
    ("dot-dot-escape", "src/../.env"),
    ("dot-dot-into-git", "src/../.git/config"),
    ("claude-settings", ".claude/settings.json"),
    ("claude-local-settings", ".claude/settings.local.json"),
]

NOT_PROTECTED = [
    ("source-file", "src/app.py"),
    ("env-example", ".env.example"),
    ("env-sample-in-subdir", "config/.env.sample"),
    ("env-template", ".env.template"),
    ("env-dist", ".env.dist"),
    ("env-named-module", "src/env.py"),
    ("gitignore", ".gitignore"),
    ("github-workflow", ".github/workflows/ci.yml"),
    ("git-dir-elsewhere", "docs/git/config"),
    ("public-key-name", "keys/server.pub"),
    ("claude-command", ".claude/commands/review.md"),
    ("claude-skill", ".claude/skills/lint/SKILL.md"),
    ("settings-elsewhere", "src/.claude/settings.json"),
]


@pytest.mark.parametrize("tool", EDIT_TOOLS)
@pytest.mark.parametrize("path", [pytest.param(p, id=i) for i, p in PROTECTED])
def test_editing_a_protected_path_is_denied(project: Path, tool: str, path: str) -> None:
    assert verdict(project, tool, edit_input(tool, path)) == "deny"


@pytest.mark.parametrize("tool", EDIT_TOOLS)
@pytest.mark.parametrize("path", [pytest.param(p, id=i) for i, p in NOT_PROTECTED])
def test_editing_an_ordinary_path_is_allowed(project: Path, tool: str, path: str) -> None:
    assert verdict(project, tool, edit_input(tool, path)) == "allow"


@pytest.mark.parametrize("tool", EDIT_TOOLS)
def test_an_absolute_path_into_the_project_is_denied(project: Path, tool: str) -> None:
    assert verdict(project, tool, edit_input(tool, str(project / "config" / ".env"))) == "deny"


def test_the_tool_never_runs(project: Path) -> None:
    tool = SpyTool()
    run = guard(project).sync.run_tool("Write", {"file_path": ".env", "content": "X=1"}, tool)
    assert run.denied and tool.calls == []
    assert (project / ".env").read_text(encoding="utf-8") == "TOKEN=x\n"


def test_an_allowed_edit_runs(project: Path) -> None:
    tool = SpyTool()
    run = guard(project).sync.run_tool("Write", {"file_path": "src/new.py", "content": ""}, tool)
    assert not run.denied and len(tool.calls) == 1


# --- symlinks ------------------------------------------------------------------------


def test_a_symlink_pointing_at_a_protected_file_is_protected(project: Path) -> None:
    os.symlink(project / ".env", project / "settings.txt")
    assert verdict(project, "Write", edit_input("Write", "settings.txt")) == "deny"


def test_a_relative_symlink_pointing_at_a_protected_file_is_protected(project: Path) -> None:
    os.symlink("../.env", project / "src" / "local_settings")
    assert verdict(project, "Edit", edit_input("Edit", "src/local_settings")) == "deny"


def test_a_new_file_under_a_symlinked_protected_dir_is_protected(project: Path) -> None:
    os.symlink(project / ".git", project / "repo")
    assert verdict(project, "Write", edit_input("Write", "repo/hooks/post-merge")) == "deny"


def test_a_symlink_named_like_a_secret_is_protected(project: Path) -> None:
    os.symlink(project / "src" / "app.py", project / "config" / ".env")
    assert verdict(project, "Write", edit_input("Write", "config/.env")) == "deny"


def test_a_symlinked_project_dir_is_resolved(project: Path, tmp_path_factory: Any) -> None:
    link = tmp_path_factory.mktemp("elsewhere") / "proj"
    os.symlink(project, link)
    assert verdict(link, "Write", edit_input("Write", str(project / ".env"))) == "deny"


# --- shell commands ------------------------------------------------------------------

SHELL_PROTECTED = [
    ("redirect", "echo X=1 > .env"),
    ("append", "echo X=1 >> config/.env.local"),
    ("stderr-redirect", "make 2> .git/build.log"),
    ("both-redirect", "pytest &> keys/out.pem"),
    ("heredoc", "cat <<EOF > .env\nX=1\nEOF"),
    ("tee", "echo k | tee keys/server.pem"),
    ("tee-append", "echo X=1 | tee -a .env"),
    ("sudo-tee", "echo X=1 | sudo tee -a config/.env.prod > /dev/null"),
    ("cp-onto", "cp .env.example .env"),
    ("cp-into-dir", "cp /tmp/a.pem keys/"),
    ("cp-into-existing-dir-without-slash", "cp /tmp/a.pem keys"),
    ("mv-away", "mv .env .env.bak"),
    ("mv-source-into-dir", "mv .env src/"),
    ("rm", "rm .env"),
    ("rm-git-dir", "rm -rf .git"),
    ("rm-glob", "rm -f keys/*"),
    ("touch-git-hook", "touch .git/hooks/post-commit"),
    ("sed-in-place", "sed -i 's/x/y/' .env"),
    ("truncate", "truncate -s 0 .env"),
    ("curl-output", "curl -o .env https://example.com/env"),
    ("dd-of", "dd if=/dev/zero of=keys/server.pem count=1"),
    ("ln-over", "ln -sf /tmp/evil .env"),
    ("dot-dot", "echo x > src/../.env"),
    ("cd-then-write", "cd config && echo X=1 > .env.local"),
    ("bash-c", "bash -c 'echo X=1 > .env'"),
    ("subshell", "(echo x > .env)"),
    ("second-command", "ls; echo x >> .git/config"),
    ("claude-settings-redirect", "echo '{}' > .claude/settings.local.json"),
    ("claude-settings-sed", "sed -i 's/hookrails/true/' .claude/settings.json"),
    ("claude-settings-rm", "rm -f .claude/settings.json"),
    ("claude-dir-rm", "rm -rf .claude"),
]

SHELL_ALLOWED = [
    ("cat", "cat .env"),
    ("grep-to-other-file", "grep TOKEN .env > found.txt"),
    ("source", "source .env && env"),
    ("chmod", "chmod 600 .env keys/server.pem"),
    ("git-add", "git add .env.example"),
    ("cp-from", "cp .env.example config/settings.ini"),
    ("write-elsewhere", "echo x > src/out.txt"),
    ("write-example", "echo X= > .env.example"),
    ("dev-null", "cat .env > /dev/null"),
    ("mention-in-text", "echo 'do not edit .env'"),
]


@pytest.mark.parametrize("command", [pytest.param(c, id=i) for i, c in SHELL_PROTECTED])
def test_a_shell_command_changing_a_protected_path_is_denied(project: Path, command: str) -> None:
    assert verdict(project, "Bash", {"command": command}) == "deny"


@pytest.mark.parametrize("command", [pytest.param(c, id=i) for i, c in SHELL_ALLOWED])
def test_a_shell_command_only_reading_protected_paths_is_allowed(
    project: Path, command: str
) -> None:
    assert verdict(project, "Bash", {"command": command}) == "allow"


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("cd src && echo x > ../.env", id="cd-then-dot-dot"),
        pytest.param("cd .git && touch hooks/pre-push", id="cd-into-git"),
    ],
)
def test_cd_does_not_move_the_protected_globs(project: Path, command: str) -> None:
    assert verdict(project, "Bash", {"command": command}) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("rm -rf config", id="rm-dir"),
        pytest.param("mv config old-config", id="mv-dir"),
        pytest.param("find . -name '.env*' -delete", id="find-delete"),
    ],
)
def test_changing_a_directory_holding_a_secret_is_denied(project: Path, command: str) -> None:
    (project / "config" / ".env.local").write_text("X=1\n", encoding="utf-8")
    assert verdict(project, "Bash", {"command": command}) == "deny"


@pytest.mark.parametrize("path", ["../.env", "../.git/config"])
def test_protected_from_a_subdirectory_cwd(project: Path, path: str) -> None:
    assert verdict(project / "src", "Write", edit_input("Write", path)) == "deny"


def test_a_redirection_through_a_symlink_is_denied(project: Path) -> None:
    os.symlink(project / ".env", project / "notes.txt")
    assert verdict(project, "Bash", {"command": "echo X=1 >> notes.txt"}) == "deny"


def test_the_shell_reason_names_the_command_and_path(project: Path) -> None:
    d = guard(project).sync.pre_tool_use("Bash", {"command": "echo k | tee -a keys/server.pem"})
    assert d.reason is not None
    assert d.reason.startswith(
        "Command denied: 'tee -a keys/server.pem' changes keys/server.pem, a protected path "
        "(matches '**/*.pem')."
    )


def test_a_bare_redirection_is_named_as_such(project: Path) -> None:
    d = guard(project).sync.pre_tool_use("Bash", {"command": "> .env"})
    assert d.reason is not None and "a redirection changes .env" in d.reason


def test_a_declared_shell_tool_is_checked(project: Path) -> None:
    g = guard(project, sh=ToolSpec(primary_arg="command"))
    assert g.sync.pre_tool_use("sh", {"command": "echo x > .env"}).decision == "deny"


# --- what the hook leaves alone ------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        pytest.param("Read", {"file_path": ".env"}, id="read"),
        pytest.param("Grep", {"pattern": "TOKEN", "path": ".env"}, id="grep"),
        pytest.param("Glob", {"pattern": "**/.env*"}, id="glob"),
        pytest.param("WebFetch", {"url": "https://x.io/.env"}, id="web-fetch"),
        pytest.param("lookup", {"path": ".env"}, id="undeclared-tool"),
        pytest.param("Write", {"content": "x"}, id="write-without-path"),
        pytest.param("Write", {"file_path": 3, "content": "x"}, id="path-not-a-string"),
    ],
)
def test_calls_that_change_nothing_known_are_allowed(
    project: Path, tool: str, tool_input: dict[str, Any]
) -> None:
    assert verdict(project, tool, tool_input) == "allow"


def test_a_declared_path_tool_with_side_effects_is_checked(project: Path) -> None:
    g = guard(project, save=ToolSpec(primary_arg="path", side_effects=True))
    assert g.sync.pre_tool_use("save", {"path": ".env", "text": "x"}).decision == "deny"


def test_a_declared_path_tool_without_side_effects_is_not(project: Path) -> None:
    g = guard(project, show=ToolSpec(primary_arg="path"))
    assert g.sync.pre_tool_use("show", {"path": ".env"}).decision == "allow"


def test_a_destructive_mcp_hint_counts_as_a_side_effect(project: Path) -> None:
    spec = ToolSpec(primary_arg="path", annotations={"destructiveHint": True})
    g = guard(project, mcp__fs__delete=spec)
    assert g.sync.pre_tool_use("mcp__fs__delete", {"path": "keys/server.pem"}).decision == "deny"


# --- configuration -------------------------------------------------------------------


def test_custom_paths_replace_the_defaults(project: Path) -> None:
    hook = ProtectPaths(paths=["secrets/**", "*.key"])
    assert verdict(project, "Write", edit_input("Write", "secrets/db.txt"), hook) == "deny"
    assert verdict(project, "Write", edit_input("Write", "tls.key"), hook) == "deny"
    assert verdict(project, "Write", edit_input("Write", ".env"), hook) == "allow"


def test_a_relative_glob_is_anchored_at_the_project_root(project: Path) -> None:
    hook = ProtectPaths(paths=["*.key"])
    assert verdict(project, "Write", edit_input("Write", "sub/tls.key"), hook) == "allow"


def test_a_home_glob_protects_outside_the_project(
    project: Path, tmp_path_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    hook = ProtectPaths(paths=["~/.ssh/**"])
    path = str(home / ".ssh" / "authorized_keys")
    assert verdict(project, "Write", edit_input("Write", path), hook) == "deny"
    assert verdict(project, "Write", edit_input("Write", "~/.ssh/config"), hook) == "deny"
    command = 'echo key >> "$HOME/.ssh/authorized_keys"'
    assert verdict(project, "Bash", {"command": command}, hook) == "deny"


def test_a_bang_glob_unprotects(project: Path) -> None:
    hook = ProtectPaths(paths=[*DEFAULT_PROTECTED_PATHS, "!.git/hooks/**"])
    assert verdict(project, "Write", edit_input("Write", ".git/hooks/pre-commit"), hook) == "allow"
    assert verdict(project, "Write", edit_input("Write", ".git/config"), hook) == "deny"


def test_the_last_matching_glob_wins(project: Path) -> None:
    hook = ProtectPaths(paths=["!**/.env.local", "**/.env*"])
    assert verdict(project, "Write", edit_input("Write", ".env.local"), hook) == "deny"


def test_the_default_reason_names_tool_path_and_glob(project: Path) -> None:
    d = guard(project).sync.pre_tool_use("Edit", edit_input("Edit", "config/.env.local"))
    assert d.reason is not None and d.reason.startswith(
        "Edit on config/.env.local denied: it is a protected path (matches '**/.env*')."
    )


def test_the_default_hint_follows_the_reason(project: Path) -> None:
    d = guard(project).sync.pre_tool_use("Write", edit_input("Write", ".env"))
    assert d.reason is not None and "ask the user to make the change" in d.reason


def test_a_custom_message_and_hint(project: Path) -> None:
    hook = ProtectPaths(message="{tool} may not touch {path} ({glob})", hint="Use the vault.")
    d = guard(project, hook).sync.pre_tool_use("Write", edit_input("Write", "keys/server.pem"))
    assert d.reason == "Write may not touch keys/server.pem (**/*.pem)\nUse the vault."


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"paths": ".env"}, "paths must be a list", id="paths-a-string"),
        pytest.param({"paths": []}, "at least one glob", id="paths-empty"),
        pytest.param({"paths": [3]}, "paths[0] must be a string", id="glob-not-a-string"),
        pytest.param({"paths": ["!"]}, "paths[0]", id="bare-bang"),
        pytest.param({"message": ""}, "message must be a non-empty string", id="empty-message"),
        pytest.param({"message": "no {file}"}, "unknown field {file}", id="message-field"),
        pytest.param({"hint": 3}, "hint must be a string", id="hint"),
    ],
)
def test_bad_configuration_names_the_parameter(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((TypeError, ValueError)) as exc:
        ProtectPaths(**kwargs)
    assert message in str(exc.value)


# --- declared in a definition file ---------------------------------------------------


def write_definition(tmp_path: Path, hook: str) -> Path:
    path = tmp_path / "agent.yaml"
    path.write_text(f"hooks:\n  PreToolUse:\n    - hooks: [{hook}]\n", encoding="utf-8")
    return path


def test_declared_by_name_uses_the_defaults(project: Path) -> None:
    g = Guard(write_definition(project, "protect_paths"), cwd=str(project), ledger=False)
    tool = SpyTool()
    run = g.sync.run_tool("Bash", {"command": "echo x > .git/config"}, tool)
    assert run.denied and tool.calls == []


def test_declared_with_params(project: Path) -> None:
    hook = (
        "{use: protect_paths, with: {paths: ['data/**', '!data/scratch/**'], "
        "message: 'no {path}', hint: 'Ask.'}}"
    )
    g = Guard(write_definition(project, hook), cwd=str(project), ledger=False)
    d = g.sync.pre_tool_use("Write", edit_input("Write", "data/raw.csv"))
    assert d.decision == "deny" and d.reason == "no data/raw.csv\nAsk."
    assert g.sync.pre_tool_use("Write", edit_input("Write", "data/scratch/x")).decision == "allow"
    assert g.sync.pre_tool_use("Write", edit_input("Write", ".env")).decision == "allow"


@pytest.mark.parametrize(
    ("hook", "message"),
    [
        pytest.param("{use: protect_paths, with: {paths: .env}}", "paths must be a list", id="s"),
        pytest.param("{use: protect_paths, with: {message: 'x {nope}'}}", "{nope}", id="field"),
    ],
)
def test_a_bad_parameter_is_a_definition_error(tmp_path: Path, hook: str, message: str) -> None:
    path = write_definition(tmp_path, hook)
    with pytest.raises(DefinitionError) as exc:
        AgentDefinition.from_file(path)
    assert str(path) in str(exc.value) and message in str(exc.value)


# --- the project root -------------------------------------------------------------------


@pytest.fixture
def no_project_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)


@pytest.mark.usefixtures("no_project_env")
@pytest.mark.parametrize(
    ("cwd", "command"),
    [
        pytest.param("src", "echo x > ../.env", id="dot-dot"),
        pytest.param("src", "cd .. && echo x > .git/config", id="cd-up"),
        pytest.param("config", "touch ../keys/new.pem", id="other-folder"),
    ],
)
def test_globs_are_anchored_at_the_project_root_not_the_cwd(
    project: Path, cwd: str, command: str
) -> None:
    assert verdict(project / cwd, "Bash", {"command": command}) == "deny"


@pytest.mark.usefixtures("no_project_env")
def test_the_root_is_the_folder_holding_git_above_the_cwd(project: Path) -> None:
    hook = ProtectPaths(paths=["config/**"])
    sub = project / "src"
    assert verdict(sub, "Write", edit_input("Write", "../config/x.yml"), hook) == "deny"
    assert verdict(sub, "Write", edit_input("Write", "config/x.yml"), hook) == "allow"


def test_claude_project_dir_names_the_root(
    project: Path, tmp_path_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "conf").mkdir()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(elsewhere))
    hook = ProtectPaths(paths=["conf/**"])
    path = str(elsewhere / "conf" / "a.yml")
    assert verdict(project, "Write", edit_input("Write", path), hook) == "deny"


@pytest.mark.usefixtures("no_project_env")
def test_the_definition_folder_names_the_root(project: Path, tmp_path_factory: Any) -> None:
    folder = tmp_path_factory.mktemp("defs")
    (folder / "agent.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - hooks: [{use: protect_paths, with: {paths: [data/**]}}]\n",
        encoding="utf-8",
    )
    g = Guard(folder / "agent.yaml", cwd=str(project), ledger=False)
    inside = str(folder / "data" / "x.csv")
    assert g.sync.pre_tool_use("Write", edit_input("Write", inside)).decision == "deny"


@pytest.mark.usefixtures("no_project_env")
def test_a_call_outside_the_project_is_also_checked_against_its_own_root(
    project: Path, tmp_path_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path_factory.mktemp("other")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    assert verdict(other, "Write", edit_input("Write", ".env")) == "deny"


# --- programs that write files, by their arguments ----------------------------------------

WRITERS = [
    ("tar-members", "tar -xf a.tar .env"),
    ("tar-into-git", "tar -xf a.tar -C .git"),
    ("tar-unknown-members-where-secrets-are", "tar -xzf a.tgz"),
    ("unzip", "unzip -o a.zip"),
    ("unzip-dir", "unzip -o a.zip -d keys"),
    ("seven-zip", "7z x a.7z"),
    ("cpio", "cpio -idmv < a.cpio"),
    ("python-zipfile", "python3 -m zipfile -e a.zip ."),
    ("vi-script-mode", "vi -es .env <<< 'wq'"),
    ("ex", "ex -sc 'wq' .env"),
    ("ed", "ed -s .env <<< $'1d\\nw\\nq'"),
    ("ed-writes-another-file", "ed -s src/app.py <<< $'w .env\\nq'"),
    ("sed-w", "sed -n 'w .env' src/app.py"),
    ("find-delete", "find . -name '.env*' -delete"),
    ("find-exec", "find . -name .env -exec truncate -s0 {} +"),
    ("xargs-literal", "echo .env | xargs rm"),
    ("xargs-find", "find . -name .env | xargs -I{} cp src/app.py {}"),
    ("git-config-file", "git config --file .git/config core.pager cat"),
    ("git-config-code", "git config core.hooksPath /tmp/hooks"),
    ("git-checkout-path", "git checkout -- .env"),
    ("git-restore", "git restore .env"),
    ("install", "install -m 600 src/app.py .env"),
    ("dd", "dd if=/dev/zero of=.env count=1"),
    ("rsync", "rsync src/app.py .env"),
    ("rsync-contents", "rsync -a /tmp/backup/ ."),
    ("cp-contents", "cp -rT /tmp/backup ."),
    ("patch-named", "patch .env < fix.patch"),
    ("patch-unnamed", "patch -p1 < fix.patch"),
    ("split", "split -l 1 src/app.py .env"),
    ("ssh-keygen", "ssh-keygen -f keys/server.pem -N ''"),
    ("openssl", "openssl genrsa -out keys/new.pem 2048"),
    ("link-then-write", "ln -s .env l && echo x > l"),
    ("cp-link-then-write", "cp -l .env h && echo x >> h"),
    ("git-clean-ignored", "git clean -fdx"),
    ("download-to", "curl -O https://x.example/.env"),
]


@pytest.mark.parametrize("command", [pytest.param(c, id=i) for i, c in WRITERS])
def test_a_program_writing_a_protected_path_is_denied(project: Path, command: str) -> None:
    assert verdict(project, "Bash", {"command": command}) == "deny"


NOT_WRITERS = [
    ("tar-into-build", "tar -xzf a.tgz -C build/"),
    ("tar-list", "tar -tf a.tar"),
    ("unzip-list", "unzip -l a.zip"),
    ("find-pyc", "find . -name '*.pyc' -delete"),
    ("find-sed-py", "find src -name '*.py' -exec sed -i 's/a/b/' {} +"),
    ("git-ls-files-sed", "git ls-files '*.py' | xargs sed -i 's/a/b/'"),
    ("view", "view .env"),
    ("git-config-name", "git config user.name 'A U Thor'"),
    ("git-remote", "git remote add origin https://x.example/r.git"),
    ("git-commit", "git commit -qm x"),
    ("cp-from-secret", "cp .env /tmp/backup"),
    ("sed-read", "sed -n '1p' .env"),
    ("python-read", "python3 -c \"print(open('.env').read())\""),
]


@pytest.mark.parametrize("command", [pytest.param(c, id=i) for i, c in NOT_WRITERS])
def test_a_program_not_writing_a_protected_path_is_allowed(project: Path, command: str) -> None:
    assert verdict(project, "Bash", {"command": command}) == "allow"


def test_a_folder_deleted_with_a_secret_two_levels_down(project: Path) -> None:
    (project / "config" / "prod").mkdir()
    (project / "config" / "prod" / ".env").write_text("X=1\n", encoding="utf-8")
    assert verdict(project, "Bash", {"command": "rm -rf config"}) == "deny"


def test_the_reason_for_unnamed_members_names_the_protected_path(project: Path) -> None:
    d = guard(project).sync.pre_tool_use("Bash", {"command": "unzip -o a.zip"})
    reason = d.reason or ""
    assert d.decision == "deny" and (".env" in reason or ".git" in reason)


def test_inline_code_naming_a_protected_path_it_writes_is_denied(project: Path) -> None:
    command = "python3 -c \"p = '.env'; open(p, 'w').write('x')\""
    assert verdict(project, "Bash", {"command": command}) == "deny"


GUARDED_DEFINITION = "name: a\nhooks:\n  PreToolUse:\n    - hooks: [protect_paths]\n"


@pytest.mark.parametrize(
    ("tool", "target"),
    [
        ("Write", "{project}/agent.yaml"),
        ("Edit", "agent.yaml"),
        ("Bash", "echo 'hooks: {{}}' > agent.yaml"),
        ("Bash", "sed -i s/protect_paths/allow/ {project}/agent.yaml"),
        ("Write", "{config}/settings.json"),
        ("Bash", "cp x {config}/settings.local.json"),
    ],
)
def test_the_files_that_hold_the_guard_are_protected_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str, target: str
) -> None:
    """The definition file (its next event loads it again) and Claude Code's user settings
    (hookrails' handlers, for a user install): rewriting either switches the guard off."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "agent.yaml").write_text(GUARDED_DEFINITION)
    config = tmp_path / "home" / ".claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    guard = Guard(AgentDefinition.from_file(str(project / "agent.yaml")), ledger=False)
    text = target.format(project=project, config=config)
    key = {"Write": "file_path", "Edit": "file_path", "Bash": "command"}[tool]
    tool_input: dict[str, Any] = {key: text}
    decision = guard.emit_sync(PreToolUse(session_id="s", cwd=str(project), tool_name=tool,
                                          tool_input=tool_input))  # fmt: skip
    assert decision.decision == "deny", decision.reason
    other = {key: text.replace("agent.yaml", "notes.yaml").replace("settings", "other")}
    decision = guard.emit_sync(
        PreToolUse(session_id="s", cwd=str(project), tool_name=tool, tool_input=other)
    )
    assert decision.decision == "allow", decision.reason


def test_paths_of_its_own_protect_only_those(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "agent.yaml").write_text(GUARDED_DEFINITION)
    guard = ProtectPaths(paths=["secrets/**"])
    definition = AgentDefinition.from_file(str(project / "agent.yaml"))
    event = PreToolUse(session_id="s", cwd=str(project), tool_name="Write",
                       tool_input={"file_path": "agent.yaml"})  # fmt: skip
    assert guard(event, type("Ctx", (), {"definition": definition})()) is None
