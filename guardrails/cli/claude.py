"""``hookrails hook`` and ``hookrails claude``: Claude Code's side of the CLI.

``hookrails hook`` normally never gets here: :mod:`guardrails.cli.entry` answers
it without importing click. This definition serves its ``--help`` and
in-process callers (tests, ``cli.main``).
"""

from __future__ import annotations

from typing import Any

import click

__all__ = ["claude", "hook"]


@click.command()
@click.option(
    "--config", "-c", required=True, type=click.Path(dir_okay=False), help="the agent definition"
)
@click.option(
    "--event",
    "-e",
    metavar="NAME",
    help="the event this command is installed for: how it fails when stdin cannot be read",
)
@click.option(
    "--ledger",
    "-l",
    "ledger_file",
    type=click.Path(dir_okay=False),
    help="the ledger file (default: $HOOKRAILS_LEDGER, else the definition's ledger:, "
    "else .hookrails/ledger.db)",
)
@click.option("--no-ledger", is_flag=True, help="record nothing")
@click.pass_context
def hook(
    ctx: click.Context, config: str, event: str | None, ledger_file: str | None, no_ledger: bool
) -> None:
    """Answer one Claude Code hook event read on stdin (the command-hook protocol).

    \b
    exit 0  the decision as Claude hook JSON on stdout (a deny or a block is in it;
            WorktreeCreate: the new worktree's path as text)
    exit 2  one line on stderr: the event could not be decided and fails closed
            (a PreToolUse always: a crash never lets a tool run; a PermissionRequest
            that fails closed exits 0 with its deny on stdout: Claude ignores exit 2)
    exit 1  one line on stderr: the event could not be decided and fails open
            (its matchers say on_failure: continue, Claude cannot block the event,
            or it is not a Claude Code event)
    """
    from ..claude_code.hook_command import HookOptions, run

    if ledger_file and no_ledger:
        raise click.UsageError("--ledger and --no-ledger exclude each other")
    options = HookOptions(config, event=event, ledger=ledger_file, no_ledger=no_ledger)
    ctx.exit(run(options))


@click.group()
def claude() -> None:
    """Install hookrails into Claude Code: hook entries in settings.json."""


def _scope_options(fn: Any) -> Any:
    fn = click.option(
        "--user",
        "scope",
        flag_value="user",
        help="~/.claude/settings.json (or $CLAUDE_CONFIG_DIR/settings.json)",
    )(fn)
    return click.option(
        "--project",
        "scope",
        flag_value="project",
        default=True,
        help="./.claude/settings.json (the default)",
    )(fn)


def _print_change(change: Any, done: str, nothing: str) -> None:
    if change.dry_run:
        for line in change.diff():
            click.echo(line)
        click.echo(f"dry run: {change.path} not written" if change.changed else nothing)
        return
    click.echo(done if change.changed else nothing)


@claude.command("install")
@_scope_options
@click.option(
    "--config", "-c", required=True, type=click.Path(dir_okay=False), help="the agent definition"
)
@click.option(
    "--http",
    "http_url",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[URL]",
    help="http hooks to `hookrails serve` instead of command hooks "
    "(default URL: http://127.0.0.1:8787/v1/claude/hook)",
)
@click.option(
    "--token", is_flag=True, help="with --http: send Authorization: Bearer $HOOKRAILS_TOKEN"
)
@click.option(
    "--portable",
    is_flag=True,
    help="run `hookrails` from PATH, not this environment's absolute path "
    "(for a settings file shared in the repository)",
)
@click.option("--dry-run", is_flag=True, help="print the change as a diff; write nothing")
def claude_install(
    scope: str, config: str, http_url: str | None, token: bool, portable: bool, dry_run: bool
) -> None:
    """Merge one hook entry per event the definition binds into Claude Code's settings.json.

    Other hooks and settings stay as they are; running it again changes nothing;
    hookrails entries already in the file are replaced. Command hooks run
    `hookrails hook`; --http points http hooks at `hookrails serve`.
    """
    from ..claude_code.settings_install import DEFAULT_URL, install

    if token and http_url is None:
        raise click.UsageError("--token goes with --http")
    http = None if http_url is None else (http_url or DEFAULT_URL)
    change = install(
        config, scope=scope, http=http, token=token, portable=portable, dry_run=dry_run
    )
    events = ", ".join(change.events) or "no events"
    done = f"installed hookrails ({change.kind} hooks) for {events} in {change.path}"
    if change.removed:
        done += f" (replacing {change.removed} earlier hookrails entries)"
    _print_change(change, done, f"hookrails is already installed in {change.path}; no change")


@claude.command("uninstall")
@_scope_options
@click.option("--dry-run", is_flag=True, help="print the change as a diff; write nothing")
def claude_uninstall(scope: str, dry_run: bool) -> None:
    """Remove hookrails' entries from Claude Code's settings.json, and nothing else."""
    from ..claude_code.settings_install import uninstall

    change = uninstall(scope=scope, dry_run=dry_run)
    _print_change(
        change,
        f"removed {change.removed} hookrails entries from {change.path}",
        f"no hookrails entries in {change.path}; no change",
    )
