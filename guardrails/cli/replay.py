"""``hookrails replay``: a recorded Claude Code session, run again through a definition."""

from __future__ import annotations

import click

__all__ = ["replay"]


@click.command()
@click.argument("transcript", type=click.Path(dir_okay=False))
@click.option(
    "--config", "-c", required=True, type=click.Path(dir_okay=False), help="the definition"
)
@click.option(
    "--ledger", "-l", "ledger_file", type=click.Path(dir_okay=False),
    help="record the replay in this file (default: a temporary ledger, removed after)",
)  # fmt: skip
@click.option(
    "--fail-on", type=click.Choice(["deny", "ask", "rewrite", "nudge"]), multiple=True,
    help="exit 3 if any call would have been denied / asked / rewritten / nudged (repeatable)",
)  # fmt: skip
@click.option("--all", "show_all", is_flag=True, help="list every call, not only notable ones")
@click.option("--json", "as_json", is_flag=True, help="one JSON document: calls, summary, warnings")
@click.pass_context
def replay(
    ctx: click.Context,
    transcript: str,
    config: str,
    ledger_file: str | None,
    fail_on: tuple[str, ...],
    show_all: bool,
    as_json: bool,
) -> None:
    """Replay a Claude Code TRANSCRIPT (.jsonl, plus its subagents) through a definition:
    what would have been denied, asked, rewritten or nudged. No tool runs; the hooks do.

    Calls are replayed with the model's original input (a hook rewrite in the recorded
    session is not in the transcript). Warnings go to stderr. Exit 0, or 3 with
    --fail-on when a call matches; 1 on an error.
    """
    from ..claude_code.replay import replay_transcript

    report = replay_transcript(transcript, config, ledger=ledger_file)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        click.echo(report.to_json())
    else:
        for line in report.lines(show_all=show_all):
            click.echo(line)
    if report.matches(fail_on):
        ctx.exit(3)
