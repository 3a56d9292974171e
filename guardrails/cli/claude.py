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
@click.option(
    "--covers",
    metavar="TAG",
    help="the plan this handler was installed for (`claude install` writes it): a PreToolUse "
    "is refused when the definition's matchers now need another install",
)
@click.option(
    "--record-only",
    is_flag=True,
    help="record PostToolUse / PostToolUseFailure / PostToolBatch in the ledger; decide "
    "nothing, never block (exit 0, or 1 with one stderr line)",
)
@click.option(
    "--except",
    "except_matcher",
    metavar="MATCHER",
    help="with --record-only: skip tools this Claude matcher fires the deciding handler for",
)
@click.pass_context
def hook(
    ctx: click.Context,
    config: str,
    event: str | None,
    ledger_file: str | None,
    no_ledger: bool,
    covers: str | None,
    record_only: bool,
    except_matcher: str | None,
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
    if except_matcher is not None and not record_only:
        raise click.UsageError("--except goes with --record-only")
    options = HookOptions(
        config,
        event=event,
        ledger=ledger_file,
        no_ledger=no_ledger,
        covers=covers,
        record_only=record_only,
        except_matcher=except_matcher,
    )
    ctx.exit(run(options))


@click.group()
def claude() -> None:
    """Install hookrails into Claude Code: hook entries in settings.json, or a plugin."""


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
@click.option(
    "--no-ledger",
    is_flag=True,
    help="command hooks record nothing (and no record-only hooks are added)",
)
@click.option(
    "--no-protect-settings",
    is_flag=True,
    help="no ConfigChange hook that blocks settings edits removing or narrowing these hooks "
    "(protect_guard_settings)",
)
@click.option("--dry-run", is_flag=True, help="print the change as a diff; write nothing")
def claude_install(
    scope: str,
    config: str,
    http_url: str | None,
    token: bool,
    portable: bool,
    no_ledger: bool,
    no_protect_settings: bool,
    dry_run: bool,
) -> None:
    """Merge hookrails' hook entries for the definition into Claude Code's settings.json.

    One deciding entry per event the definition binds; on tool events only the
    tools its matchers can match start a hookrails process (`hookrails check`
    shows which). With a ledger, record-only async entries close every call's
    row. A ConfigChange entry (command hooks) blocks settings edits that remove or
    narrow these entries. Other hooks and settings stay as they are; running it again changes
    nothing; hookrails entries already in the file are replaced. Command hooks
    run `hookrails hook`; --http points http hooks at `hookrails serve`. Warns
    when the `claude` on PATH is older than the version the entries need.
    """
    from ..claude_code.claude_version import check_claude_version
    from ..claude_code.settings_install import DEFAULT_URL, install

    if token and http_url is None:
        raise click.UsageError("--token goes with --http")
    if no_ledger and http_url is not None:
        raise click.UsageError(
            "--no-ledger goes with command hooks (`hookrails serve` has its own)"
        )
    http = None if http_url is None else (http_url or DEFAULT_URL)
    change = install(
        config,
        scope=scope,
        http=http,
        token=token,
        portable=portable,
        dry_run=dry_run,
        ledger=not no_ledger,
        protect_settings=not no_protect_settings,
    )
    warning = check_claude_version()
    if warning:
        click.echo(f"warning: {warning}", err=True)
    events = ", ".join(change.events) or "no events"
    if change.recorded:
        events += f" (record-only: {', '.join(change.recorded)})"
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


@claude.command("plugin")
@click.option(
    "--config", "-c", required=True, type=click.Path(dir_okay=False), help="the agent definition"
)
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(file_okay=False),
    help="the plugin folder to write (missing or empty)",
)
@click.option("--name", help="the plugin's name (default: the definition's name, kebab-case)")
@click.option("--no-ledger", is_flag=True, help="the plugin's hooks record nothing")
@click.option("--force", is_flag=True, help="replace a plugin folder this command wrote before")
def claude_plugin(config: str, out: str, name: str | None, no_ledger: bool, force: bool) -> None:
    """Write a Claude Code plugin that carries the definition and its hooks.

    The folder holds .claude-plugin/plugin.json, hooks/hooks.json (the entries
    `install` would write, finding the definition through ${CLAUDE_PLUGIN_ROOT})
    and hookrails/ (the definition and the hook modules and schema files it names
    beside it). Its hooks run `hookrails` from PATH. Try it with
    `claude --plugin-dir OUT`, or publish it in a marketplace.
    """
    from ..claude_code.plugin import write_plugin

    result = write_plugin(config, out, name=name, ledger=not no_ledger, force=force)
    click.echo(f"wrote the Claude Code plugin {result.name!r} to {result.folder}:")
    for file in result.files:
        click.echo(f"  {file}")
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
