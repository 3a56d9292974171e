"""The README's 60-second example runs as written and prints what the README says."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._paths import REPO

pytestmark = pytest.mark.e2e

README = REPO / "README.md"


def _blocks(lang: str, section: str | None = None) -> list[str]:
    text = README.read_text()
    if section is not None:
        text = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def test_readme_starts_with_the_two_commands() -> None:
    first = _blocks("sh")[0]
    assert [line.split()[:2] for line in first.strip().splitlines()] == [
        ["make", "demo"],
        ["make", "test"],
    ]


def test_host_snippets_compile_and_their_imports_exist() -> None:
    """Each host's snippet is valid Python whose imports name real things."""
    blocks = _blocks("python", "Hosts")
    assert len(blocks) >= 4
    for block in blocks:
        compile(block, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        imports = "\n".join(
            line for line in block.splitlines() if line.startswith(("from ", "import "))
        )
        exec(compile(imports, "README.md", "exec"), {})


@pytest.mark.slow
def test_quick_start_shows_what_hookrails_demo_prints(tmp_path: Path) -> None:
    shown = _blocks("text", "Quick start")[0]
    out = subprocess.run(
        [sys.executable, "-m", "guardrails", "demo", "--ledger", str(tmp_path / "l.db")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert shown.strip() in out


@pytest.mark.slow
def test_sixty_second_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    example = _blocks("python", "60-second example")[0]
    expected = _blocks("text", "60-second example")[0]
    script = tmp_path / "example.py"
    script.write_text(example)
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert out.strip() == expected.strip()


@pytest.mark.slow
def test_quickstart_guards_calls_and_summarises_the_ledger(tmp_path: Path) -> None:
    """examples/quickstart.py: decisions, then a ledger summary by SQL."""
    script = README.parent / "examples" / "quickstart.py"
    out = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=tmp_path,
    ).stdout
    assert "Denied: force-push is not allowed" in out
    assert "Denied: deploy needs passing tests" in out and "-> ok      deployed" in out
    assert (tmp_path / ".hookrails" / "ledger.db").is_file()
    assert "deploy     ok       1" in out and "hookrails ledger query" in out


def test_the_built_ins_example_loads_and_guards(tmp_path: Path) -> None:
    """The README's built-ins YAML is a working definition: every built-in resolves."""
    import json

    from guardrails import AgentDefinition, Guard

    section = README.read_text().split("## Built-in guardrails", 1)[1]
    yaml_text = re.findall(r"```yaml\n(.*?)```", section, re.S)[0]
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "send_invoice.json").write_text(
        json.dumps(
            {
                "type": "object",
                "required": ["invoice_id", "amount"],
                "properties": {"invoice_id": {"type": "string"}, "amount": {"type": "number"}},
            }
        )
    )
    path = tmp_path / "agent.yaml"
    path.write_text(yaml_text)
    guard = Guard(AgentDefinition.from_file(path), cwd=str(tmp_path), ledger=False)
    names = {b.hook.name for chain in guard._index.bindings.values() for b in chain}
    assert {
        "schema_guardrail",
        "schema_nudge",
        "idempotency_guard",
        "bash_side_effects",
        "deny_commands",
        "protect_paths",
        "tool_budget",
        "redact_secrets",
        "require_artifacts",
        "completion_promise",
        "skill_discovery",
    } <= names
    assert guard.sync.pre_tool_use("Bash", {"command": "git push --force"}).denied
    assert guard.sync.pre_tool_use("send_invoice", {"invoice_id": 7}).denied
    assert guard.sync.pre_tool_use("Write", {"file_path": ".env", "content": "x"}).denied
    assert not guard.sync.pre_tool_use("Bash", {"command": "ls"}).denied
