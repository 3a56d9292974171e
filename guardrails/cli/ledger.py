"""``hookrails ledger``: inspect and maintain the ledger (a SQLite file or PostgreSQL).

Each command is one call into :mod:`guardrails.ledger.admin` (imported when the
command runs: importing the CLI stays light) and prints what it answers.
Errors become one-line messages in :mod:`guardrails.cli.main`, which also words
a raw ``sqlite3`` error from these commands.
"""

from __future__ import annotations

import json
from typing import Any

import click

__all__ = ["ledger"]


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
        help="the ledger file or postgresql:// URL (default: $HOOKRAILS_LEDGER, else "
        "--config's ledger:, else .hookrails/ledger.db)",
    )(fn)


def _path(ledger_file: str | None, config: str | None, *, catch_up: bool = True) -> str:
    """The ledger these options choose; with ``catch_up``, what hook processes journaled is
    imported first, so every command sees it (a file that cannot be written: a warning)."""
    from ..ledger.admin import ledger_path

    path = ledger_path(ledger_file, config)
    if catch_up:
        _catch_up(path)
    return path


def _catch_up(path: str) -> None:
    from ..ledger.journal_import import import_pending

    problem = import_pending(path)
    if problem:
        click.echo(f"warning: {problem}", err=True)


@click.group()
def ledger() -> None:
    """Inspect and maintain the ledger (a SQLite file or a postgresql:// URL): every
    call, decision and hook run.

    Queries read it read-only; prune, recover and copy write to it.
    """


@ledger.command("path")
@_ledger_options
def ledger_path_cmd(ledger_file: str | None, config: str | None) -> None:
    """Print the ledger file these options (and $HOOKRAILS_LEDGER) choose."""
    click.echo(_path(ledger_file, config, catch_up=False))


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
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="stop a query after this much work, e.g. a recursive CTE that never ends (0: no limit)",
)
def query(
    sql: str | None,
    ledger_file: str | None,
    config: str | None,
    saved: str | None,
    params: tuple[tuple[str, str], ...],
    fmt: str,
    max_width: int,
    timeout: float,
) -> None:
    """Run one read-only SQL statement (or a saved query) against the ledger.

    \b
    hookrails ledger query "select tool_name, status, count(*) from tool_calls group by 1, 2"
    hookrails ledger query --saved session_timeline -p session 3f2a... -f json
    """
    from ..ledger.query import run_query

    result = run_query(
        _path(ledger_file, config), sql, saved=saved, params=dict(params), timeout=timeout
    )
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


@ledger.command("copy")
@click.argument("source")
@click.argument("dest")
def copy_cmd(source: str, dest: str) -> None:
    """Copy every row of the ledger SOURCE into DEST: a SQLite file into PostgreSQL
    (postgresql://…) or back. Ids are kept, rows already there are skipped (copying
    again inserts nothing), and rows are counted on both sides afterwards."""
    from ..ledger.admin import ledger_path
    from ..ledger.copy import copy_ledger

    _catch_up(ledger_path(source))
    report = copy_ledger(ledger_path(source), ledger_path(dest))
    for line in report.lines():
        click.echo(line)
