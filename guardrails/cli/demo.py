"""``hookrails demo``: the command, and how it prints the scripted session's steps.

The session itself (the bundled definition, the tools, the script) is
:mod:`guardrails.cli.demo_run`, imported when the command runs: it loads the
Guard and the ledger, which importing the CLI must not.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from .demo_run import DemoReport, DemoStep

__all__ = ["demo", "render_step", "render_summary"]


@click.command()
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
    from .demo_run import DEMO_DEFINITION, run_demo

    if show_definition:
        click.echo(DEMO_DEFINITION, nl=False)
        return
    if as_json:
        report = run_demo(ledger_file, workdir=workdir)
        click.echo(json.dumps(report.to_json(), indent=2, default=str))
        return
    click.echo("hookrails demo: a scripted support agent under the bundled definition")
    click.echo("(see it with `hookrails demo --show-definition`)\n")
    report = run_demo(
        ledger_file, workdir=workdir, progress=lambda s: click.echo("\n".join(render_step(s)))
    )
    click.echo("\n".join(render_summary(report)))


_MARK = {
    "ok": "ran",
    "allowed": "allowed",
    "denied": "DENIED, the tool did not run",
    "replayed": "DENIED as a duplicate; the stored result is replayed, the tool did not run again",
    "blocked": "BLOCKED: sent back to work",
    "error": "failed",
}


def render_step(step: DemoStep) -> list[str]:
    """A step as a few readable lines: what was called, what was decided, what the model reads."""
    who = "" if step.agent == "main" else f"[{step.agent}] "
    what = f"{step.tool} {json.dumps(step.input)}" if step.tool else step.event
    lines = [step.title, f"     {who}{what}", f"     -> {_MARK.get(step.outcome, step.outcome)}"]
    for line in step.detail.splitlines():
        if line.strip():
            lines.append(f"        {line}")
    return lines


def render_summary(report: DemoReport) -> list[str]:
    """The ledger read back by SQL, then the commands to explore it further."""
    lines = ["", f"ledger: {report.ledger}  (session {report.session_id})", ""]
    lines += _table(report.summary, "tool calls by agent, tool and status")
    lines += _table(report.stops, "stop events")
    lines += _table(report.hooks, "hooks that denied or blocked")
    ran = ", ".join(f"{k} {v}x" for k, v in report.executions.items())
    lines += [f"tool functions that really ran: {ran}", "", "explore further:"]
    lines += [f"  {cmd}" for cmd in report.explore]
    return lines


def _table(rows: list[dict[str, Any]], title: str) -> list[str]:
    if not rows:
        return [f"{title}: none", ""]
    cols = list(rows[0])
    widths = [max(len(c), *(len(str(r[c])) for r in rows)) for c in cols]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [f"{title}:", "  " + fmt.format(*cols), "  " + fmt.format(*("-" * w for w in widths))]
    out += ["  " + fmt.format(*(str(r[c]) for c in cols)) for r in rows]
    return [*out, ""]
