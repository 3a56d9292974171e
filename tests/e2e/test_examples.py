"""Every runnable example runs offline (fake-model mode, no key) and shows what it promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._paths import REPO

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

EXAMPLES = REPO / "examples"

# script -> text its output must contain
CASES = {
    "quickstart.py": ["Denied: force-push is not allowed", "hookrails ledger query"],
    "custom_loop.py": [
        "Bash {'command': 'git push --force origin main'} -> denied",
        "Write input does not match its schema",
        "protected path",
        "ledger: Bash denied x1, Bash ok x1, Write denied x2, Write ok x1",
    ],
    "openai_agents_example.py": [
        "model: scripted (offline)",
        'Example of a valid input: {"command": "ls -la"}',
        "write_file on .env denied",
        "final: Notes written and checked. <promise>DONE</promise>",
        "stops: block, allow",
    ],
    "langchain_example.py": [
        "model: scripted (offline)",
        'Example of a valid input: {"command": "ls -la"}',
        "-> (would run) $ git push --dry-run origin main",
        "Denied: Command denied by rule 'rm -rf *'",
        "stops: block, allow",
    ],
    "claude_agent_sdk_agent.py": [
        "model: scripted (offline)",
        "PreToolUse:mcp__notes__add_note hook error: mcp__notes__add_note input does not "
        "match its schema",
        "- $.text: unexpected field; allowed fields: file, line",
        'Example of a valid input: {"file": ',
        "ok: [{'type': 'text', 'text': 'added a line to notes.txt'}]",
        "Command denied by rule 'git push --force *'",
        "it is a protected path",
        "mcp__notes__add_note  denied  x1",
        "mcp__notes__add_note  ok      x1",
        "stops: block, allow",
    ],
}


@pytest.mark.parametrize("script", sorted(CASES))
def test_example_runs_offline(script: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("HOOKRAILS_LEDGER", None)
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    for needle in CASES[script]:
        assert needle in out.stdout, f"{script}: {needle!r} not in output:\n{out.stdout}"


def test_claude_code_example_settings_are_what_install_writes(tmp_path: Path) -> None:
    """The example's .claude/settings.json is what `claude install --portable` writes."""
    folder = EXAMPLES / "claude_code"
    (tmp_path / "agent.yaml").write_text((folder / "agent.yaml").read_text())
    env = {**os.environ, "HOOKRAILS_CACHE_DIR": ""}
    done = subprocess.run(
        [sys.executable, "-m", "guardrails", "claude", "install", "-c", "agent.yaml", "--portable"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    written = (tmp_path / ".claude" / "settings.json").read_text()
    assert written == (folder / ".claude" / "settings.json").read_text()


def test_every_python_example_is_covered() -> None:
    scripts = {p.name for p in EXAMPLES.glob("*.py")} - {"hooks.py", "deploy_rule.py"}
    assert scripts <= set(CASES), f"examples without a test: {sorted(scripts - set(CASES))}"
