"""The README's two commands, and its examples print what the README says.

That every block runs at all is tests/e2e/test_docs.py's job, for docs/ too.
"""

from __future__ import annotations

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
