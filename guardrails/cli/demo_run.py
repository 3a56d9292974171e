"""What ``hookrails demo`` runs: a scripted agent session on the embedded ledger.

No model, no network, no key: the "agent" is a script of the calls a model
would make, and the tools are small Python functions working in a demo
folder beside the ledger. Everything between them is the real thing: the bundled definition
below goes through the same loader as a user's ``agent.yaml``, the Guard
decides, and every event lands in the SQLite ledger. The command and how it
prints the steps are in :mod:`guardrails.cli.demo`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from ..definition.model import AgentDefinition
from ..dispatch.guard import Guard
from ..dispatch.toolrun import ToolRun
from ..errors import LedgerError
from ..ledger.reader import EXAMPLE_QUERY
from ..ledger.sqlite import Ledger
from ..results import Decision

__all__ = ["DEMO_DEFINITION", "DemoReport", "DemoStep", "load_definition", "run_demo"]

#: the bundled definition, in the file format (``hookrails demo --show-definition``)
DEMO_DEFINITION = """\
name: support-agent
description: Searches the docs, files tickets, and has a writer subagent produce a report.

tools:
  search_docs:
    schema:
      type: object
      properties: {query: {type: string, minLength: 1}}
      required: [query]
      additionalProperties: false
    annotations: {readOnlyHint: true}
  create_ticket:
    side_effects: true
    idempotency: {key: [title]}
    schema:
      type: object
      properties:
        title: {type: string, minLength: 3}
        priority: {type: string, enum: [low, normal, high]}
        body: {type: string}
      required: [title, priority, body]
      additionalProperties: false
  Write:
    side_effects: true

hooks:
  PreToolUse:
    - matcher: "search_docs|create_ticket|Write"
      priority: 10
      hooks: [schema_guardrail]
    - matcher: "Write"
      priority: 20
      hooks: [{use: protect_paths, with: {paths: [".env*", "**/*.pem", ".git/**"]}}]
    - matcher: "create_ticket|Write"
      priority: 30
      hooks: [idempotency_guard]
  PostToolUse:
    - matcher: "create_ticket|Write"
      hooks: [idempotency_guard]
  PostToolUseFailure:
    - hooks: [schema_nudge]
  SubagentStop:
    - matcher: writer
      hooks: [{use: require_artifacts, with: {paths: [REPORT.txt]}}]
  Stop:
    - hooks: [{use: completion_promise, with: {promise: DONE, max_iterations: 5}}]
"""


@dataclass
class DemoStep:
    """One thing the scripted agent did and what the guardrails decided."""

    step: int
    title: str
    event: str
    tool: str | None
    input: Any
    outcome: str
    ran: bool
    detail: str
    agent: str = "main"


@dataclass
class DemoReport:
    session_id: str
    ledger: str
    workdir: str
    steps: list[DemoStep] = field(default_factory=list)
    #: tool name -> how many times its function really ran
    executions: dict[str, int] = field(default_factory=dict)
    summary: list[dict[str, Any]] = field(default_factory=list)
    stops: list[dict[str, Any]] = field(default_factory=list)
    hooks: list[dict[str, Any]] = field(default_factory=list)
    explore: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class _Tools:
    """The demo's tools; each counts its real executions so the report can prove denials."""

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        self.executions: dict[str, int] = {}
        self.tickets = 0

    def _ran(self, name: str) -> None:
        self.executions[name] = self.executions.get(name, 0) + 1

    def search_docs(self, query: str) -> str:
        self._ran("search_docs")
        return f"2 results for {query!r}: 'Resetting a password', 'Login troubleshooting'"

    def create_ticket(self, title: str, priority: str, body: str) -> dict[str, Any]:
        self._ran("create_ticket")
        self.tickets += 1
        return {"ticket": f"T-{self.tickets}", "title": title, "priority": priority}

    def write(self, file_path: str, content: str) -> str:
        self._ran("Write")
        path = os.path.join(self.workdir, file_path)
        if os.path.commonpath([os.path.realpath(path), os.path.realpath(self.workdir)]) != (
            os.path.realpath(self.workdir)
        ):
            raise ValueError(f"{file_path}: outside the demo folder")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(content)
        return f"wrote {len(content)} bytes to {file_path}"


def load_definition() -> AgentDefinition:
    import yaml

    return AgentDefinition.from_dict(yaml.safe_load(DEMO_DEFINITION), source=None)


def run_demo(
    ledger_path: str | None = None,
    *,
    workdir: str | None = None,
    progress: Callable[[DemoStep], None] | None = None,
) -> DemoReport:
    """Run the scripted session; ``progress`` sees each step as it finishes.

    The tools work in ``workdir``, by default a ``demo`` folder beside the
    ledger, kept afterwards so the messages that name it stay true. The two
    files the script writes are removed first, so every run starts alike.
    """
    ledger = Ledger(ledger_path)
    try:
        if ledger.degraded is not None:  # the demo is about what the ledger keeps
            raise LedgerError(
                f"cannot write the ledger ({ledger.degraded}); pass --ledger FILE somewhere "
                "writable",
                path=str(ledger.path),
            )
        folder = workdir or os.path.join(os.path.dirname(str(ledger.path)), "demo")
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise OSError(
                f"cannot create the demo's work folder {folder}: {exc.strerror or exc}; "
                "pass --workdir DIR (and --ledger FILE) somewhere writable"
            ) from None
        for name in ("REPORT.txt", ".env"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(folder, name))
        return _run(ledger, os.path.abspath(folder), progress)
    finally:
        ledger.close()


def _run(ledger: Ledger, workdir: str, progress: Callable[[DemoStep], None] | None) -> DemoReport:
    guard = Guard(load_definition(), ledger=ledger, cwd=workdir)
    session = guard.session(cwd=workdir)
    tools = _Tools(workdir)
    report = DemoReport(session.session_id, str(ledger.path), workdir)

    def add(step: DemoStep) -> None:
        report.steps.append(step)
        if progress is not None:
            progress(step)

    def call(title: str, tool: str, args: dict[str, Any], fn: Any, **agent: Any) -> ToolRun:
        before = tools.executions.get(tool, 0)
        run = session.run_tool_sync(tool, args, fn, **agent)
        ran = tools.executions.get(tool, 0) > before
        outcome = "replayed" if run.replayed else run.status
        if run.replayed:
            detail = run.pre.reason or ""
        else:
            detail = run.for_model() if run.status != "ok" else _text(run.output)
        who = agent.get("agent_type") or "main"
        add(
            DemoStep(
                len(report.steps) + 1, title, "PreToolUse", tool, args, outcome, ran, detail, who
            )
        )
        return run

    def stop(title: str, decision: Decision, agent: str = "main") -> None:
        outcome = "blocked" if decision.blocked else "allowed"
        detail = decision.reason if decision.blocked else "; ".join(decision.system_messages)
        event = decision.event_name
        add(
            DemoStep(
                len(report.steps) + 1, title, event, None, None, outcome, False, detail or "", agent
            )
        )

    session.sync.user_prompt_submit("Users can't log in after a password reset. File a ticket.")
    call("1. a valid call", "search_docs", {"query": "password reset login"}, tools.search_docs)
    ticket = {"title": "Login fails after reset", "priority": "high", "body": "Since 2.3."}
    call(
        "2. an invalid call is denied with an instruction and an example",
        "create_ticket",
        {"title": "Login fails after reset", "priority": 1},
        tools.create_ticket,
    )
    call("   ... and the corrected call runs", "create_ticket", ticket, tools.create_ticket)
    call(
        "3. the same side-effecting call again is stopped by idempotency",
        "create_ticket",
        ticket,
        tools.create_ticket,
    )
    call(
        "4. a write to a protected path is denied",
        "Write",
        {"file_path": ".env", "content": "TOKEN=x\n"},
        tools.write,
    )
    writer = {"agent_id": "writer-1", "agent_type": "writer"}
    session.sync.subagent_start(**writer)
    stop(
        "5. the writer subagent stops without its report: sent back",
        session.sync.subagent_stop(**writer, last_assistant_message="Report is ready."),
        "writer",
    )
    call(
        "   ... it writes REPORT.txt",
        "Write",
        {"file_path": "REPORT.txt", "content": "# Login after reset\n"},
        tools.write,
        **writer,
    )
    stop(
        "   ... and may stop now",
        session.sync.subagent_stop(**writer, last_assistant_message="Wrote REPORT.txt."),
        "writer",
    )
    stop(
        "6. the agent tries to stop before the promise: held",
        session.sync.agent_stop("Ticket filed; I think that's everything."),
    )
    stop(
        "   ... and stops once it says the promise",
        session.sync.agent_stop("Ticket T-1 filed, report written. <promise>DONE</promise>"),
    )
    session.sync.session_end("other")

    report.executions = dict(sorted(tools.executions.items()))
    reader = ledger.reader
    report.summary = reader.session_call_counts(session.session_id)
    report.stops = reader.session_stop_decisions(session.session_id)
    report.hooks = reader.session_hook_refusals(session.session_id)
    path = shlex.quote(str(ledger.path))
    exe = _command("hookrails")
    report.explore = [
        f'{exe} ledger query --ledger {path} -p session {session.session_id} "{EXAMPLE_QUERY}"',
        f"{exe} ledger query --ledger {path} --saved session_timeline "
        f"-p session {session.session_id}",
        f"{_command('sqlite-utils')} tables {path} --counts",
        f"datasette {path}    # pip install datasette",
    ]
    return report


def _command(name: str) -> str:
    """How to run ``name`` from a shell: bare if PATH finds this environment's, else the
    script's path (a new user has not activated ``.venv`` yet)."""
    found = shutil.which(name)
    script = os.path.join(os.path.dirname(sys.executable), name)
    if found and os.path.realpath(found) == os.path.realpath(script):
        return name
    if os.path.isfile(script):
        rel = os.path.relpath(script)
        return shlex.quote(script if rel.startswith("..") else rel)
    return name


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)
