"""What ``hookrails check`` and ``hookrails explain`` compute, as library calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._event_table import NO_MATCHER, SUBJECT_VALUES
from .._event_table import SUBJECTS as SUBJECT_FIELDS
from ..definition.coverage import unmatched_tools
from ..definition.matchers import BUILTIN_PRIMARY_ARGS, ArgPredicate
from ..definition.model import AgentDefinition
from ..errors import EventError
from ..events import TOOL_EVENTS, TOOL_NAME_EVENTS, Event, event_class
from ..results import UNSET, Decision
from .chains import legacy_matcher
from .guard import Guard

__all__ = ["CheckReport", "Explanation", "check_definition", "explain_event"]

CLAUDE_TOOLS = (*BUILTIN_PRIMARY_ARGS, "TodoWrite", "BashOutput", "KillShell")


@dataclass
class CheckReport:
    definition: AgentDefinition
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_definition(path: str) -> CheckReport:
    """Load and compile ``path``; list bindings; warn about matchers that match no tool and
    declared tools that no tool matcher matches.

    Raises :class:`~guardrails.DefinitionError` (located) for what would fail at run
    time too: a hook module that cannot be imported (or exits on import), and a
    declared tool schema that is missing or not a JSON Schema, whether or not a hook
    reads it yet.
    """
    import warnings

    from ..builtins.schema.guardrail import ToolSchemas

    definition = AgentDefinition.from_file(path)
    with warnings.catch_warnings():  # a legacy SessionStart matcher: said below, located
        warnings.filterwarnings("ignore", "Session(Start|End) matcher", FutureWarning)
        guard = Guard(definition, ledger=False)  # checking writes nothing; hooks check it
    ToolSchemas().check(definition)
    report = CheckReport(definition)
    bindings = guard.bindings
    total = sum(len(v) for v in bindings.values())
    matchers = sum(len(v) for v in definition.hooks.values())
    report.lines.append(
        f"ok: {path}: agent {definition.name!r}, {len(definition.tools)} tools, "
        f"{matchers} matchers, {total} hook bindings"
    )
    for event, entries in bindings.items():
        for b in entries:
            report.lines.append(
                f"  {event:<18} priority {b.priority:<4} {b.label:<32} -> {b.hook.name} "
                f"(timeout {b.timeout:g}s, on_failure {b.on_failure})"
            )
    known = list(definition.tools) or list(CLAUDE_TOOLS)
    which = "declared tools" if definition.tools else "Claude Code built-in tools"
    lines = definition.locations
    for event, matchers_ in definition.hooks.items():
        if event not in TOOL_EVENTS:
            continue
        for i, m in enumerate(matchers_):
            if m.pattern.match_all or m.pattern.negate:
                continue
            if not any(m.pattern.matches_name(tool) for tool in known):
                loc = ("hooks", event, i, "matcher")
                line = next((lines[loc[:n]] for n in (4, 3) if loc[:n] in lines), None)
                where = f"{path}:{line}" if line else path
                report.warnings.append(
                    f"{where}: hooks.{event}[{i}].matcher {m.matcher!r} matches none of the "
                    f"{which} ({', '.join(known)})"
                )
    report.warnings += _subject_warnings(definition, path)
    for unmatched in unmatched_tools(definition, definition.tools):
        where = path + (f":{unmatched.line}" if unmatched.line else "")
        report.warnings.append(f"{where}: {unmatched.message}")
    return report


def _subject_warnings(definition: AgentDefinition, path: str) -> list[str]:
    """Matchers of events with a documented set of subjects (SessionStart sources, ...)
    that match none of them, and matchers on events whose matcher Claude ignores."""
    out: list[str] = []
    lines = definition.locations
    for event, matchers_ in definition.hooks.items():
        values = SUBJECT_VALUES.get(event)
        key = "Stop" if event == "AgentStop" and ("hooks", "Stop") in lines else event
        for i, m in enumerate(matchers_):
            if m.pattern.match_all or m.pattern.negate:
                continue
            loc = ("hooks", key, i, "matcher")
            line = next((lines[loc[:n]] for n in (4, 3) if loc[:n] in lines), None)
            where = f"{path}:{line}" if line else path
            if legacy_matcher(event, m, definition.name):
                out.append(
                    f"{where}: hooks.{key}[{i}].matcher {m.matcher!r} names the agent; "
                    f"{event} matchers match Claude's {SUBJECT_FIELDS[event]} "
                    f"({', '.join(values or ())}), so it is kept matching every {event} for "
                    "now: scope it with agents: [...] instead"
                )
            elif values is not None and not any(m.pattern.matches_name(v) for v in values):
                out.append(
                    f"{where}: hooks.{key}[{i}].matcher {m.matcher!r} matches none of the "
                    f"{SUBJECT_FIELDS[event]} values Claude sends ({', '.join(values)})"
                )
            elif event in NO_MATCHER:
                out.append(
                    f"{where}: hooks.{key}[{i}].matcher {m.matcher!r}: Claude has no matcher "
                    f"on {key}; hookrails tests it against the agent's name "
                    f"({definition.name!r})"
                )
    return out


@dataclass
class Explanation:
    event: Event
    bindings: list[dict[str, Any]]
    decision: Decision

    def as_dict(self) -> dict[str, Any]:
        d = self.decision
        return {
            "event": self.event.to_claude(),
            "bindings": self.bindings,
            "runs": [r._asdict() for r in d.runs],
            "decision": d.decision,
            "explicit": d.explicit,
            "reason": d.reason,
            "blocked": d.blocked,
            "halted": d.halted,
            "updated_input": d.updated_input,
            "updated_output": None if d.updated_output is UNSET else d.updated_output,
            "additional_context": [i._asdict() for i in d.injections],
            "system_messages": d.system_messages,
            "notes": d.notes,
            "claude_output": d.to_claude(),
        }

    def lines(self) -> list[str]:
        d = self.decision
        ev = self.event
        subject = ev.subject if ev.subject is not None else "(agent)"
        out = [f"event: {ev.event_name} {subject}"]
        if not self.bindings:
            out.append("bindings: none match")
        else:
            out.append("bindings:")
            for b in self.bindings:
                arg = (
                    ""
                    if b["argument_rule"] is None
                    else (
                        "  [argument rule matched]"
                        if b["argument_rule"]
                        else "  [argument rule: no match]"
                    )
                )
                out.append(f"  priority {b['priority']:<4} {b['matcher']:<32} -> {b['hook']}{arg}")
        if d.runs:
            out.append("hooks:")
            for r in d.runs:
                err = f"  ({r.error})" if r.error else ""
                out.append(f"  {r.hook:<40} {r.outcome:<8} {r.duration_ms:8.2f} ms{err}")
        verdict: str = d.decision
        if d.blocked:
            verdict = "block"
        if d.halted:
            verdict = "halt"
        out.append(f"decision: {verdict}" + (f": {d.reason}" if d.reason else ""))
        if d.updated_input is not None:
            out.append(f"updated input: {d.updated_input}")
        for inj in d.injections:
            out.append(f"context from {inj.hook}: {inj.text}")
        out.extend(f"note: {n}" for n in d.notes)
        return out


def explain_event(
    path: str | AgentDefinition,
    event_name: str,
    *,
    tool_name: str | None = None,
    tool_input: Any = None,
    response: Any = None,
    error_text: str | None = None,
    prompt: str | None = None,
    message: str | None = None,
    agent_type: str | None = None,
    agent_id: str | None = None,
    cwd: str | None = None,
    tenant: str | None = None,
    payload: Any = None,
) -> Explanation:
    """Dry-run one event through the definition at ``path``."""
    guard = Guard(path, tenant=tenant, cwd=cwd, ledger=False)  # a dry run records nothing
    if payload is not None:
        payload = {**payload, "hook_event_name": payload.get("hook_event_name", event_name)}
        event = Event.from_claude(payload)
    else:
        cls = event_class(event_name)
        fields: dict[str, Any] = {"agent_type": agent_type, "agent_id": agent_id}
        if event_name in ("Stop",):
            fields["hook_event_name"] = "Stop"
        if cls.event_name in TOOL_NAME_EVENTS:
            if not tool_name:
                raise EventError(f"{cls.event_name} needs --tool")
            if tool_input is not None and not isinstance(tool_input, dict):
                raise EventError("must be a JSON object", field="--input")
            fields.update(tool_name=tool_name, tool_input=tool_input or {})
            if cls.event_name == "PostToolUse":
                fields["tool_response"] = response
            if cls.event_name == "PostToolUseFailure":
                fields["error"] = error_text or ""
        elif cls.event_name == "UserPromptSubmit":
            fields["prompt"] = prompt or ""
        elif cls.event_name in ("AgentStop", "SubagentStop"):
            fields["last_assistant_message"] = message
        event = cls(**fields)
    chain = guard.chain_for(event)
    bindings = []
    for b, pred in chain:
        arg = None
        if isinstance(pred, ArgPredicate):
            arg = pred(getattr(event, "tool_input", {}) or {}, event.cwd)
        bindings.append(
            {
                "priority": b.priority,
                "matcher": b.label,
                "hook": b.hook.name,
                "argument_rule": arg,
                "timeout": b.timeout,
                "on_failure": b.on_failure,
            }
        )
    decision = guard.emit_sync(event)
    return Explanation(event, bindings, decision)
