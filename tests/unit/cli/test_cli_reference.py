"""docs/cli.md is the commands' current --help (regenerate: `make docs`)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from guardrails.cli.main import cli
from tests._paths import REPO
from tools.clidoc import CLI_MD, page, reference, update

CLI_DOC = REPO / "docs" / "cli.md"


def test_cli_md_is_current() -> None:
    assert CLI_MD == CLI_DOC
    text = CLI_DOC.read_text(encoding="utf-8")
    assert text == page(), "docs/cli.md is stale: run `make docs`"


def test_reference_covers_every_command() -> None:
    ref = reference()
    for name in cli.list_commands(None):  # type: ignore[arg-type]
        assert f"### `hookrails {name}`" in ref


def test_reference_shows_what_help_prints() -> None:
    help_text = (
        CliRunner().invoke(cli, ["demo", "--help"], prog_name="hookrails", terminal_width=88).output
    )
    assert help_text.strip() in reference()


def test_index_links_every_section() -> None:
    """Each row of the command table links to the heading GitHub renders for it."""
    import re

    text = page()
    headings = re.findall(r"^### `(hookrails[^`]*)`$", text, re.M)
    for path in headings:
        anchor = "#" + path.replace(" ", "-")
        assert f"[`{path}`]({anchor})" in text


def test_update_writes_once_then_is_idempotent(tmp_path: Path) -> None:
    target = tmp_path / "docs" / "cli.md"
    assert update(target) is True
    assert target.read_text(encoding="utf-8") == page()
    assert update(target) is False
