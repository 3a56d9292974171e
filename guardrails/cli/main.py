"""The ``hookrails`` command: a thin layer over the library.

Each command is a few lines over one library call. Here: the root group, the
two definition commands (``check``, ``explain``) and the one place where errors
become messages: one line on stderr and a non-zero exit, never a traceback.
Each other command group lives in its own module (``ledger``, ``claude``,
``serve``, ``replay``, ``demo``) and is added here.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ..errors import GuardrailsError
from .claude import claude, hook
from .demo import demo
from .ledger import ledger
from .replay import replay
from .serve import serve

__all__ = ["cli", "main"]

#: groups whose commands word a raw ``sqlite3`` or ``psycopg`` error as one line too: the
#: ledger commands open files and servers a user names; elsewhere it is a bug (traceback)
_SQLITE_GROUPS = frozenset({ledger.name})


class _Group(click.Group):
    """Library errors (:class:`~guardrails.errors.GuardrailsError`, whose message already
    says where: ``file:line: path``) and OS errors end the command with one line."""

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
        except Exception as exc:  # a database error the library did not word: still one line
            if ctx.invoked_subcommand in _SQLITE_GROUPS and _database_error(exc):
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
                click.echo(f"error: {first}", err=True)
                ctx.exit(1)
            raise


def _database_error(exc: Exception) -> bool:
    """A ``sqlite3`` or ``psycopg`` error (a file or a server the user named), from a module
    already loaded: neither is imported here."""
    for module in ("sqlite3", "psycopg"):
        loaded = sys.modules.get(module)
        if loaded is not None and isinstance(exc, loaded.Error):
            return True
    return False


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="hookrails", prog_name="hookrails")
def cli() -> None:
    """hookrails: declarative guardrails for LLM agents."""


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
def check(file: str) -> None:
    """Load and compile FILE, report its bindings, and warn about matchers that match no tool
    and declared tools that no tool matcher matches.

    Then which Claude Code tool calls reach hookrails once `hookrails claude install`
    wrote its command hooks: per event, the matcher (and `if`) it writes, or every tool
    call, and why.

    Exits 1 on an invalid definition, with one line saying where: a hook module that
    cannot be imported (or exits as it is imported), a tool schema that is missing or
    not a JSON Schema, a file too large or nested too deeply.
    """
    from ..claude_code.settings_install import plans_for
    from ..dispatch.explain import check_definition

    report = check_definition(file)
    for line in report.lines:
        click.echo(line)
    plans = plans_for(file)
    if plans:
        click.echo("Claude Code (hookrails claude install) starts hookrails for:")
        for plan in plans:
            click.echo(f"  {plan.describe()}")
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


for _command in (ledger, demo, serve, hook, claude, replay):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="hookrails")


if __name__ == "__main__":  # pragma: no cover
    main()
