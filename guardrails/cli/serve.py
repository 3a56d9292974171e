"""``hookrails serve``: Claude Code http hooks answered by one warm process.

The server is :mod:`guardrails.claude_code.http_server`; this module is what
the command prints around it (where it listens, how to call it, a warning when
anyone on the network could drive the hooks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..claude_code.http_server import HookServer

__all__ = ["exposure_warning", "serve", "startup_lines"]


@click.command()
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
    "--write-behind/--no-write-behind", default=True, show_default=True,
    help="SQLite: journal events that need no session state before answering and import "
    "them in batches a few ms later (reads through hookrails import first); off: one "
    "transaction per event before its answer",
)  # fmt: skip
@click.option(
    "--insecure", is_flag=True,
    help="allow a --host beyond loopback without a token (anyone who reaches it drives the "
    "hooks)",
)  # fmt: skip
@click.option(
    "--max-connections", type=click.IntRange(1), default=128, show_default=True, metavar="N",
    help="connections served at once; past it the one waiting longest for its request is "
    "dropped, or, when all are busy, the new one gets 503",
)  # fmt: skip
@click.option(
    "--workers", type=click.IntRange(1), default=16, show_default=True, metavar="N",
    help="connection threads kept warm, each deciding its requests' events (more start on "
    "demand, one per connection); 4 x N hooks hung past their deadline make events fail at once",
)  # fmt: skip
@click.option("--verbose", "-v", is_flag=True, help="log every request on stderr")
def serve(
    config: str,
    host: str,
    port: int,
    token: str | None,
    ledger_file: str | None,
    no_ledger: bool,
    write_behind: bool,
    insecure: bool,
    max_connections: int,
    workers: int,
    verbose: bool,
) -> None:
    """Answer Claude Code http hooks (POST /v1/claude/hook) from one warm process.

    \b
    Also GET /v1/hooks (the bindings), GET /v1/stats (from the ledger views),
    POST /v1/explain (a dry run) and GET /v1/health. Stops on Ctrl-C or SIGTERM.
    Requests from web pages (an Origin header, a non-JSON body, a foreign Host on
    loopback) are refused. An empty token (or $HOOKRAILS_TOKEN set but empty) is an
    error, not "no auth": unset the variable to serve without a token. A hook that
    hangs fails its own event at the deadline and its session's next events at once,
    never other sessions' events. A definition that does not load (a tool schema file
    that is missing, say) stops it before it listens.
    """
    import logging
    import os

    from ..claude_code import http_server as _serve
    from ..dispatch.guard import Guard
    from ..errors import ServeError
    from ..ledger.common import is_url

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
    if write_behind and guard.ledger is not None and not is_url(guard.ledger.path):
        guard.ledger.write_behind()
    server = _serve.make_server(
        guard,
        host,
        port,
        token,
        insecure=insecure,
        max_connections=max_connections,
        workers=workers,
    )
    for line in startup_lines(server):
        click.echo(line)
    warning = exposure_warning(server)
    if warning:
        click.echo(warning, err=True)
    _serve.serve_until_signal(server)
    if guard.ledger is not None:
        guard.ledger.close()
    click.echo("hookrails serve: stopped")


def startup_lines(server: HookServer) -> list[str]:
    """What ``hookrails serve`` prints once it listens: where, for what, and how to call it."""
    from ..claude_code.http_server import HOOK_ROUTE, TOKEN_ENV
    from ..ledger.common import safe_url  # a URL's password stays out of the log

    app = server.app
    d = app.definition
    ledger = app.guard.ledger
    hook_url = server.url + HOOK_ROUTE
    lines = [
        f"hookrails serve: agent {d.name!r}"
        + (f" from {d.source}" if d.source else "")
        + f", {sum(len(b) for b in app.guard.bindings.values())} hook bindings, "
        + (f"ledger {safe_url(ledger.path)}" if ledger is not None else "no ledger"),
        f"listening on {server.url}",
        f"  Claude Code http hooks: POST {hook_url}",
        f"  also: GET {server.url}/v1/hooks, /v1/stats, /v1/health; POST /v1/explain",
    ]
    if app.token_required:
        lines += [
            "  every request needs the header  Authorization: Bearer <token>",
            f'  in .claude/settings.json: "headers": {{"Authorization": "Bearer ${TOKEN_ENV}"}}, '
            f'"allowedEnvVars": ["{TOKEN_ENV}"]  (export {TOKEN_ENV} where claude runs)',
            f'  curl -H "Authorization: Bearer ${TOKEN_ENV}" {server.url}/v1/health',
        ]
    lines.append("Ctrl-C (or SIGTERM) stops it")
    return lines


def exposure_warning(server: HookServer) -> str | None:
    """A warning when anyone on the network could ask this server for decisions."""
    from ..claude_code.http_server import TOKEN_ENV

    if server.app.token_required or server.loopback:
        return None
    return (
        f"warning: listening on {server.host} (not loopback) without a token (--insecure): "
        "anyone who can "
        f"reach port {server.port} can read the bindings and stats and drive the hooks; "
        f"set --token or ${TOKEN_ENV}"
    )
