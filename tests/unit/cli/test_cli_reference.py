"""The README's CLI reference is the commands' current --help (regenerate: `make docs`)."""

from __future__ import annotations

from click.testing import CliRunner

from guardrails.cli.main import cli
from tests._paths import REPO
from tools.clidoc import BEGIN, END, reference

README = REPO / "README.md"


def test_readme_cli_reference_is_current() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    assert section.strip() == reference().strip(), "README CLI reference is stale: run `make docs`"


def test_reference_covers_every_command() -> None:
    ref = reference()
    for name in cli.list_commands(None):  # type: ignore[arg-type]
        assert f"### `hookrails {name}`" in ref


def test_reference_shows_what_help_prints() -> None:
    help_text = (
        CliRunner().invoke(cli, ["demo", "--help"], prog_name="hookrails", terminal_width=88).output
    )
    assert help_text.strip() in reference()
