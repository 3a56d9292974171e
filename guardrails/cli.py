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

from .errors import GuardrailsError

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
    from ._report import check_definition

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
    from ._report import explain_event

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
    from ._ledger_ops import ledger_path

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
    from ._ledger_ops import ledger_status

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
    from ._ledger_ops import run_query

    result = run_query(_path(ledger_file, config), sql, saved=saved, params=dict(params))
    for line in result.render(fmt, max_width=max_width):
        click.echo(line)


@ledger.command()
@_ledger_options
def views(ledger_file: str | None, config: str | None) -> None:
    """List the views (with their columns) and the saved queries."""
    from ._ledger_ops import ledger_catalog

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
    from ._ledger_ops import tail_calls

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
    from ._ledger_ops import export_table

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
    from ._ledger_ops import prune_ledger

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
    from ._ledger_ops import backup_ledger

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
    from ._ledger_ops import recover_ledger

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
def demo(ledger_file: str | None, workdir: str | None, as_json: bool, show_definition: bool) -> None:
    """Run a scripted agent session through a bundled definition on the SQLite ledger.

    No model, network or key. The ledger is resolved as everywhere else
    (--ledger, $HOOKRAILS_LEDGER, else .hookrails/ledger.db).
    """
    from . import _demo

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


def main() -> None:
    cli(prog_name="hookrails")


if __name__ == "__main__":  # pragma: no cover
    main()
