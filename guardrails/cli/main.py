"""The ``hookrails`` command: a thin layer over the library.

Each command is a few lines over one library call. This is the only place
errors become messages: one line on stderr and a non-zero exit, never a
traceback.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ..errors import GuardrailsError

__all__ = ["cli", "main"]


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GuardrailsError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(1)
        except BrokenPipeError:  # `hookrails check ... | head`: the reader left; not an error
            sys.stderr.close()
            ctx.exit(0)
        except (OSError, ValueError) as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="hookrails", prog_name="hookrails")
def cli() -> None:
    """hookrails: declarative guardrails for LLM agents."""


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
def check(file: str) -> None:
    """Load and compile FILE, report its bindings, and warn about matchers that match no tool.

    Exits 1 on an invalid definition.
    """
    from ..dispatch.explain import check_definition

    report = check_definition(file)
    for line in report.lines:
        click.echo(line)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)


def _json_arg(value: str | None, what: str) -> Any:
    if value is None:
        return None
    if value.startswith("@"):
        with open(value[1:], encoding="utf-8") as fh:
            value = fh.read()
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(  # noqa: B904 - click shows only the message
            f"not valid JSON ({exc.msg} at column {exc.colno})", param_hint=what
        )


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--event", "-e", "event_name", required=True, help="PreToolUse, Stop, ...")
@click.option("--tool", "-t", "tool_name", help="tool name, for tool events")
@click.option("--input", "-i", "tool_input", help="tool input as JSON (or @file.json)")
@click.option("--response", help="tool response as JSON, for PostToolUse")
@click.option("--error", "error_text", help="error text, for PostToolUseFailure")
@click.option("--prompt", help="prompt text, for UserPromptSubmit")
@click.option("--message", help="last assistant message, for stop events")
@click.option("--agent-type", help="agent type (subagent events, agents= scopes)")
@click.option("--agent-id", help="agent id")
@click.option("--cwd", help="working directory the event happens in (default: here)")
@click.option("--tenant", help="tenant, for tenants= scopes")
@click.option("--payload", help="a whole Claude hook payload as JSON (or @file.json)")
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
def explain(file: str, event_name: str, as_json: bool, **fields: Any) -> None:
    """Dry-run one event through FILE: matched bindings, each hook's outcome, the decision."""
    from ..dispatch.explain import explain_event

    fields["tool_input"] = _json_arg(fields["tool_input"], "--input")
    fields["response"] = _json_arg(fields["response"], "--response")
    fields["payload"] = _json_arg(fields["payload"], "--payload")
    result = explain_event(file, event_name, **fields)
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2, default=str))
    else:
        for line in result.lines():
            click.echo(line)


# --- hookrails ledger ----------------------------------------------------------------------


class _LedgerGroup(_Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:  # a sqlite3 error the library did not word: still one line
            sqlite3 = sys.modules.get("sqlite3")
            if sqlite3 is not None and isinstance(exc, sqlite3.Error):
                click.echo(f"error: {exc}", err=True)
                ctx.exit(1)
            raise


def _ledger_options(fn: Any) -> Any:
    fn = click.option(
        "--config",
        type=click.Path(dir_okay=False),
        help="take the ledger path from this definition's `ledger:` key",
    )(fn)
    return click.option(
        "--ledger",
        "-l",
        "ledger_file",
        type=click.Path(),
        help="the ledger file (default: $HOOKRAILS_LEDGER, else --config's ledger:, "
        "else .hookrails/ledger.db)",
    )(fn)


def _path(ledger_file: str | None, config: str | None) -> str:
    from ..ledger.admin import ledger_path

    return ledger_path(ledger_file, config)


@cli.group(cls=_LedgerGroup)
def ledger() -> None:
    """Inspect and maintain the SQLite ledger: every call, decision and hook run.

    Queries open the file read-only; only prune and recover write to it.
    """


@ledger.command("path")
@_ledger_options
def ledger_path_cmd(ledger_file: str | None, config: str | None) -> None:
    """Print the ledger file these options (and $HOOKRAILS_LEDGER) choose."""
    click.echo(_path(ledger_file, config))


@ledger.command()
@_ledger_options
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
def status(ledger_file: str | None, config: str | None, as_json: bool) -> None:
    """Rows per table, file and WAL size, schema version and any spool waiting."""
    from ..ledger.admin import ledger_status

    report = ledger_status(_path(ledger_file, config))
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        for line in report.lines():
            click.echo(line)


@ledger.command()
@click.argument("sql", required=False)
@_ledger_options
@click.option("--saved", "-s", metavar="NAME", help="run ledger/queries/NAME.sql instead")
@click.option(
    "--param",
    "-p",
    "params",
    type=(str, str),
    multiple=True,
    metavar="NAME VALUE",
    help="bind :NAME to VALUE (repeatable)",
)
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["table", "json", "jsonl", "csv"]),
    default="table",
    show_default=True,
)
@click.option(
    "--max-width",
    type=click.IntRange(min=0),
    default=80,
    show_default=True,
    help="cut longer table cells (0: never)",
)
def query(
    sql: str | None,
    ledger_file: str | None,
    config: str | None,
    saved: str | None,
    params: tuple[tuple[str, str], ...],
    fmt: str,
    max_width: int,
) -> None:
    """Run one read-only SQL statement (or a saved query) against the ledger.

    \b
    hookrails ledger query "select tool_name, status, count(*) from tool_calls group by 1, 2"
    hookrails ledger query --saved session_timeline -p session 3f2a... -f json
    """
    from ..ledger.query import run_query

    result = run_query(_path(ledger_file, config), sql, saved=saved, params=dict(params))
    for line in result.render(fmt, max_width=max_width):
        click.echo(line)


@ledger.command()
@_ledger_options
def views(ledger_file: str | None, config: str | None) -> None:
    """List the views (with their columns) and the saved queries."""
    from ..ledger.query import ledger_catalog

    for line in ledger_catalog(_path(ledger_file, config)).lines():
        click.echo(line)


@ledger.command()
@_ledger_options
@click.option(
    "-n", "count", type=click.IntRange(min=0), default=20, show_default=True,
    help="how many of the latest calls to show first",
)  # fmt: skip
@click.option("--follow", "-f", is_flag=True, help="keep printing new calls until Ctrl-C")
@click.option(
    "--interval", type=click.FloatRange(min=0.05), default=1.0, show_default=True,
    help="seconds between polls with --follow",
)  # fmt: skip
@click.option("--max-polls", type=click.IntRange(min=0), hidden=True)
def tail(
    ledger_file: str | None,
    config: str | None,
    count: int,
    follow: bool,
    interval: float,
    max_polls: int | None,
) -> None:
    """The latest tool calls, one line each: time, session, status, decision, duration,
    the call and the reason or error."""
    from ..ledger.admin import tail_calls

    calls = tail_calls(
        _path(ledger_file, config), count, follow=follow, interval=interval, max_polls=max_polls
    )
    try:
        for call in calls:
            click.echo(call.line())
    except KeyboardInterrupt:
        pass


@ledger.command()
@_ledger_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "json", "csv"]),
    default="jsonl",
    show_default=True,
)
@click.option(
    "--table",
    "-t",
    type=click.Choice(["tool_calls", "events", "hook_runs", "sessions", "idempotency_keys"]),
    default="tool_calls",
    show_default=True,
)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="write here, not stdout")
def export(
    ledger_file: str | None, config: str | None, fmt: str, table: str, output: str | None
) -> None:
    """Every row of a table, as JSON lines (values exactly as stored)."""
    from ..ledger.admin import export_table

    result = export_table(_path(ledger_file, config), table)
    if output is None:
        for line in result.render(fmt, max_width=0):
            click.echo(line)
        return
    with open(output, "w", encoding="utf-8") as fh:
        fh.writelines(line + "\n" for line in result.render(fmt, max_width=0))
    click.echo(f"wrote {result.count} rows of {table} to {output}", err=True)


@ledger.command()
@_ledger_options
@click.option("--before", metavar="DATE", help="2026-01-31 or an ISO time (UTC unless it says)")
@click.option("--keep-days", type=click.FloatRange(min=0), metavar="N", help="keep the last N days")
@click.option("--dry-run", is_flag=True, help="count what would go; change nothing")
def prune(
    ledger_file: str | None,
    config: str | None,
    before: str | None,
    keep_days: float | None,
    dry_run: bool,
) -> None:
    """Delete calls, hook runs and events older than a cutoff (and the sessions left
    empty), in one transaction."""
    from ..ledger.admin import prune_ledger

    report = prune_ledger(
        _path(ledger_file, config), before=before, keep_days=keep_days, dry_run=dry_run
    )
    for line in report.lines():
        click.echo(line)


@ledger.command()
@click.argument("dest", type=click.Path(dir_okay=False))
@_ledger_options
def backup(dest: str, ledger_file: str | None, config: str | None) -> None:
    """Copy the ledger to DEST (VACUUM INTO: consistent and compact, safe while agents
    write). Never overwrites."""
    from ..ledger.admin import backup_ledger

    report = backup_ledger(_path(ledger_file, config), dest)
    click.echo(f"backed up {report.path} to {report.dest} ({report.size:,} bytes)")


@ledger.command()
@_ledger_options
@click.option(
    "--older-than",
    type=click.FloatRange(min=0),
    metavar="MINUTES",
    help="also mark pending calls started longer ago than this interrupted",
)
def recover(ledger_file: str | None, config: str | None, older_than: float | None) -> None:
    """Import records spooled while the ledger could not be written, and mark calls that
    never finished (their process is gone) interrupted."""
    from ..ledger.admin import recover_ledger

    report = recover_ledger(_path(ledger_file, config), older_than)
    where = f" from {', '.join(report.spools)}" if report.spools else ""
    click.echo(f"imported {report.imported} spooled records{where}")
    click.echo(f"marked {report.interrupted} unfinished calls interrupted")
    if report.rejected:
        kept = ", ".join(f"{s}.rejected" for s in report.spools)
        click.echo(
            f"warning: {report.rejected} spooled records could not be imported; kept in {kept}",
            err=True,
        )


@cli.command()
@click.option("--ledger", "ledger_file", type=click.Path(dir_okay=False), help="ledger file")
@click.option("--workdir", type=click.Path(file_okay=False), help="folder the tools work in")
@click.option("--json", "as_json", is_flag=True, help="machine output: one JSON document")
@click.option("--show-definition", is_flag=True, help="print the bundled definition and exit")
def demo(
    ledger_file: str | None, workdir: str | None, as_json: bool, show_definition: bool
) -> None:
    """Run a scripted agent session through a bundled definition on the SQLite ledger.

    No model, network or key. The ledger is resolved as everywhere else
    (--ledger, $HOOKRAILS_LEDGER, else .hookrails/ledger.db).
    """
    from . import demo as _demo

    if show_definition:
        click.echo(_demo.DEMO_DEFINITION, nl=False)
        return
    if as_json:
        report = _demo.run_demo(ledger_file, workdir=workdir)
        click.echo(json.dumps(report.to_json(), indent=2, default=str))
        return
    click.echo("hookrails demo: a scripted support agent under the bundled definition")
    click.echo("(see it with `hookrails demo --show-definition`)\n")
    report = _demo.run_demo(
        ledger_file, workdir=workdir, progress=lambda s: click.echo("\n".join(_demo.render_step(s)))
    )
    click.echo("\n".join(_demo.render_summary(report)))


@cli.command()
@click.option(
    "--config", "-c", required=True, type=click.Path(dir_okay=False),
    help="the agent definition (YAML, TOML or JSON)",
)  # fmt: skip
@click.option("--host", default="127.0.0.1", show_default=True, help="address to listen on")
@click.option(
    "--port", "-p", type=click.IntRange(0, 65535), default=8787, show_default=True,
    help="0 picks a free port (the startup line says which)",
)  # fmt: skip
@click.option(
    "--token", envvar="HOOKRAILS_TOKEN", show_envvar=True, metavar="TOKEN",
    help="require the header Authorization: Bearer TOKEN (prefer the variable: "
    "a flag shows in ps)",
)  # fmt: skip
@click.option(
    "--ledger", "-l", "ledger_file", type=click.Path(dir_okay=False),
    help="record into this file (default: $HOOKRAILS_LEDGER, else the definition's "
    "ledger:, else .hookrails/ledger.db)",
)  # fmt: skip
@click.option("--no-ledger", is_flag=True, help="record nothing")
@click.option(
    "--insecure", is_flag=True,
    help="allow a --host beyond loopback without a token (anyone who reaches it drives the "
    "hooks)",
)  # fmt: skip
@click.option("--verbose", "-v", is_flag=True, help="log every request on stderr")
def serve(
    config: str,
    host: str,
    port: int,
    token: str | None,
    ledger_file: str | None,
    no_ledger: bool,
    insecure: bool,
    verbose: bool,
) -> None:
    """Answer Claude Code http hooks (POST /v1/claude/hook) from one warm process.

    \b
    Also GET /v1/hooks (the bindings), GET /v1/stats (from the ledger views),
    POST /v1/explain (a dry run) and GET /v1/health. Stops on Ctrl-C or SIGTERM.
    Requests from web pages (an Origin header, a non-JSON body, a foreign Host on
    loopback) are refused. An empty token (or $HOOKRAILS_TOKEN set but empty) is an
    error, not "no auth": unset the variable to serve without a token.
    """
    import logging
    import os

    from ..claude_code import http_server as _serve
    from ..dispatch.guard import Guard
    from ..errors import ServeError

    if token is None and os.environ.get(_serve.TOKEN_ENV) == "":
        raise ServeError(
            f"${_serve.TOKEN_ENV} is set but empty: set it to the token, or unset it to "
            "serve without one"
        )
    _serve.check_exposure(host, token, insecure=insecure)  # before the ledger is opened
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(asctime)s %(message)s"
    )
    guard = Guard(config, ledger=False if no_ledger else ledger_file or True)
    server = _serve.make_server(guard, host, port, token, insecure=insecure)
    for line in _serve.startup_lines(server):
        click.echo(line)
    warning = _serve.exposure_warning(server)
    if warning:
        click.echo(warning, err=True)
    _serve.serve_until_signal(server)
    if guard.ledger is not None:
        guard.ledger.close()
    click.echo("hookrails serve: stopped")


# --- hookrails hook, hookrails claude ------------------------------------------------------


@cli.command()
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
    exit 0  the decision as Claude hook JSON on stdout (a deny or a block is in it)
    exit 2  one line on stderr: the event could not be decided and fails closed
            (a PreToolUse always: a crash never lets a tool run)
    exit 1  one line on stderr: the event could not be decided and fails open
            (its matchers say on_failure: continue, or it is not a hookrails event)
    """
    from ..claude_code.hook_command import HookOptions, run

    if ledger_file and no_ledger:
        raise click.UsageError("--ledger and --no-ledger exclude each other")
    options = HookOptions(config, event=event, ledger=ledger_file, no_ledger=no_ledger)
    ctx.exit(run(options))


@cli.group()
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


@cli.command()
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
        click.echo(json.dumps(report.as_dict(), indent=2, ensure_ascii=False, default=str))
    else:
        for line in report.lines(show_all=show_all):
            click.echo(line)
    if report.matches(fail_on):
        ctx.exit(3)


def main() -> None:
    cli(prog_name="hookrails")


if __name__ == "__main__":  # pragma: no cover
    main()
