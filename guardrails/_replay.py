"""``hookrails replay``: what a definition would have decided in a recorded Claude Code session.

The transcript (``~/.claude/projects/<project>/<session>.jsonl``) and its subagent
transcripts (``<session>/subagents/**/agent-<id>.jsonl``, found next to it) are read;
every ``tool_use`` is paired by id with its ``tool_result`` and run through the Guard
as ``PreToolUse``, then ``PostToolUse`` (or ``PostToolUseFailure`` when the result is
an error), with the transcript's ``session_id`` and each record's ``cwd``. **No tool
runs**: only the hooks do (command and http hooks included; they are hooks).

Decisions worth knowing (``hookrails replay --help`` says the short form):

* **Input.** A call is replayed with the input the model sent (``tool_use.input``).
  A rewrite made by a hook in the original session (``updatedInput``) is not in the
  transcript, so it is neither seen nor undone. Post events get the recorded result
  (``toolUseResult``, else the ``tool_result`` content). Hooks that look at files
  (``require_artifacts``) see this machine's files, not the recorded session's.
* **Order.** Each event happens at its record: ``PreToolUse`` at the ``tool_use``,
  the post event at the ``tool_result`` (parallel calls: pre, pre, post, post).
  Subagent records are merged in by timestamp. A result that comes before its
  ``tool_use`` is held and replayed right after it (with a warning).
* **After a deny** (ours) the call is taken as not run: no post event, the ledger
  row stays ``denied``. After an ``ask`` the post event runs: the transcript shows
  the call went ahead. The transcript carries on as it really did.
* **Calls that did not run in the original session** (denied by a hook there:
  ``"PreToolUse:Bash hook error: <reason>"``, or rejected by the user) and calls
  with no result (the session ended first) get ``PreToolUse`` only. Their ledger
  row, when still pending, is finished as ``interrupted`` with the reason.
* **Turns.** A user prompt in the main transcript starts a turn
  (``Session.new_turn``: fresh injection budget, a halt is over); no
  ``UserPromptSubmit`` or stop event is replayed.
* **Ledger.** Hooks that read the ledger (idempotency, budgets, "deploy after
  tests") must see the replayed history, so there always is one: ``ledger=`` a
  file (each ``tool_calls`` row is annotated ``{"replayed": {"transcript", "line"}}``;
  a file that already holds the session is refused, a second replay would collide
  with the first), else a temporary file removed afterwards. The user's default
  ledger (``$HOOKRAILS_LEDGER``, the definition's ``ledger:``) is never written.
  The Guard's clock is the transcript's: rows carry the records' times and TTLs
  count in transcript time.
* **Mess.** Blank lines and unknown record types are skipped (types counted); a
  line that is not JSON, a truncated last line, a repeated ``tool_use`` id, a
  result with no ``tool_use`` and an unreadable subagent file are warnings. A
  missing file, a file with no transcript record, and a bad definition stop the
  replay with one error naming the file (and line).
* **Output** is redacted with the ledger's secret patterns. The human report lists
  the notable calls (``--all``: every call) and a table per tool; warnings go to
  stderr. CLI exit: 0; 3 when ``--fail-on deny|ask|rewrite|nudge`` matches a call
  (so CI can tell a finding from an error); 1 on an error.

``ReplayReport.as_dict()`` (``--json``) is one document::

    {"version": 1, "transcript": str, "session_id": str, "cwd": str, "agent": str,
     "ledger": str | null,                       # null: a temporary ledger
     "files": [{"path", "agent_id", "agent_type", "parent_tool_use_id", "records"}],
     "record_types": {type: count},              # every record read; "(no type)" without one
     "calls": [{"index", "tool_use_id", "tool_name", "tool_input", "agent_id", "agent_type",
                "file", "line", "timestamp",
                "decision": "allow" | "deny" | "ask", "reason", "halted",
                "rewritten_input": dict | null, "rewritten_output": bool,
                "context": [{"event", "hook", "text"}], "feedback": str | null,
                "post_event": "PostToolUse" | "PostToolUseFailure" | null,
                "original": {"status": "ok" | "error" | "interrupted" | "denied" | "rejected"
                                       | "missing", "reason", "line", "context": [str]},
                "hooks": [{"event", "hook", "matcher", "outcome", "duration_ms", "error"}],
                "notes": [str]}],
     "summary": {"calls", "allowed", "denied", "asked", "rewritten", "nudged", "halted",
                 "hook_failures", "denied_originally", "missing_results",
                 "by_tool": {tool: {"calls", "allowed", "denied", "asked", "rewritten",
                                    "nudged"}}},
     "warnings": [{"file", "line", "message"}]}

"nudged" means the model would have been given context (``additional_context``) or
post-event feedback (a ``PostToolUse`` block).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ._matching import BUILTIN_PRIMARY_ARGS
from ._redact import DEFAULT_REDACTOR
from .definition import AgentDefinition
from .errors import LedgerError, TranscriptError
from .events import PostToolUse, PostToolUseFailure, PreToolUse
from .guard import Guard
from .ledger import Ledger
from .results import UNSET

if TYPE_CHECKING:
    from .guard import Session
    from .results import Decision

__all__ = [
    "Original",
    "ReplayReport",
    "ReplayWarning",
    "ReplayedCall",
    "TranscriptFile",
    "replay_transcript",
]

JSON_VERSION: Final = 1
#: record types Claude Code writes (CLI 2.1.x); others are counted and skipped all the same
KNOWN_TYPES: Final = frozenset(
    {
        "user",
        "assistant",
        "system",
        "attachment",
        "summary",
        "queue-operation",
        "file-history-snapshot",
        "last-prompt",
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "tools-used",
        "cost-state",
        "atis-latch",
    }
)
NO_TYPE: Final = "(no type)"
#: ``"Error: PreToolUse:Bash hook error: [cmd]: reason"``: a hook denied the call there
_HOOK_DENIED = re.compile(
    r"(?:Error: )?(PreToolUse:\S+) hook error: (?:\[(?:[^\[\]]|\[[^\[\]]*\])*\]:\s*)?(.*)", re.S
)
_USER_REJECTED: Final = (
    "User rejected tool use",
    "The user doesn't want to proceed with this tool use",
)
_NOT_RUN: Final = frozenset({"denied", "rejected", "missing"})
_LABEL_CHARS = 100


# --- what the report holds ------------------------------------------------------------


@dataclass
class ReplayWarning:
    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


@dataclass
class TranscriptFile:
    """One file read: the main transcript or a subagent's."""

    path: str
    agent_id: str | None = None
    agent_type: str | None = None
    parent_tool_use_id: str | None = None
    records: int = 0


@dataclass
class Original:
    """What happened to the call in the recorded session.

    ``status``: ``ok``, ``error``, ``interrupted``, ``denied`` (by a hook there),
    ``rejected`` (by the user) or ``missing`` (no result in the transcript).
    """

    status: str = "missing"
    reason: str | None = None
    line: int | None = None
    context: list[str] = field(default_factory=list)

    @property
    def ran(self) -> bool:
        return self.status not in _NOT_RUN


@dataclass
class ReplayedCall:
    """One tool call of the transcript and what the definition decided for it."""

    index: int
    tool_use_id: str
    tool_name: str
    tool_input: dict[str, Any]
    file: str
    line: int
    timestamp: str | None
    agent_id: str | None
    agent_type: str | None
    pre: Decision
    post: Decision | None = None
    original: Original = field(default_factory=Original)

    @property
    def decision(self) -> str:
        return self.pre.decision

    @property
    def verdict(self) -> str:
        """``allowed``, ``denied`` or ``asked``: the summary column it counts in."""
        return {"deny": "denied", "ask": "asked"}.get(self.pre.decision, "allowed")

    @property
    def rewritten_input(self) -> dict[str, Any] | None:
        upd = self.pre.updated_input
        return None if upd is None or upd == self.tool_input or self.pre.denied else upd

    @property
    def rewritten_output(self) -> bool:
        return self.post is not None and self.post.updated_output is not UNSET

    @property
    def contexts(self) -> list[tuple[str, str, str]]:
        """(event, hook, text) of every context the model would have been given."""
        return [
            (d.event_name, i.hook, i.text)
            for d in (self.pre, self.post)
            if d is not None
            for i in d.injections
        ]

    @property
    def feedback(self) -> str | None:
        """A post event's block reason: feedback the model would have read."""
        if self.post is not None and self.post.blocked:
            return self.post.reason or "blocked by hook"
        return None

    @property
    def halted(self) -> bool:
        return self.pre.halted or (self.post is not None and self.post.halted)

    @property
    def rewritten(self) -> bool:
        return self.rewritten_input is not None or self.rewritten_output

    @property
    def nudged(self) -> bool:
        return bool(self.contexts) or self.feedback is not None

    @property
    def failures(self) -> list[str]:
        return [
            f"{r.hook} {r.outcome}" + (f" ({r.error})" if r.error else "")
            for d in (self.pre, self.post)
            if d is not None
            for r in d.runs
            if r.outcome in ("error", "timeout", "invalid", "refused")
        ]

    @property
    def notable(self) -> bool:
        """Worth a line in the human report: anything but a plain allow of a call that ran."""
        return (
            self.pre.decision != "allow"
            or self.halted
            or self.rewritten
            or self.nudged
            or bool(self.failures)
            or not self.original.ran
        )

    def matches(self, kind: str) -> bool:
        """Does this call count for ``--fail-on kind``?"""
        return {
            "deny": self.pre.denied,
            "ask": self.pre.decision == "ask",
            "rewrite": self.rewritten,
            "nudge": self.nudged,
        }[kind]

    def as_dict(self) -> dict[str, Any]:
        runs = [
            {
                "event": d.event_name,
                "hook": r.hook,
                "matcher": r.matcher,
                "outcome": r.outcome,
                "duration_ms": round(r.duration_ms, 3),
                "error": r.error,
            }
            for d in (self.pre, self.post)
            if d is not None
            for r in d.runs
        ]
        notes = [n for d in (self.pre, self.post) if d is not None for n in d.notes]
        return {
            "index": self.index,
            "tool_use_id": self.tool_use_id,
            "tool_name": self.tool_name,
            "tool_input": self.tool_input,
            "agent_id": self.agent_id,
            "agent_type": self.agent_type,
            "file": self.file,
            "line": self.line,
            "timestamp": self.timestamp,
            "decision": self.pre.decision,
            "reason": self.pre.reason,
            "halted": self.halted,
            "rewritten_input": self.rewritten_input,
            "rewritten_output": self.rewritten_output,
            "context": [{"event": e, "hook": h, "text": t} for e, h, t in self.contexts],
            "feedback": self.feedback,
            "post_event": None if self.post is None else self.post.event_name,
            "original": {
                "status": self.original.status,
                "reason": self.original.reason,
                "line": self.original.line,
                "context": self.original.context,
            },
            "hooks": runs,
            "notes": notes,
        }


@dataclass
class ReplayReport:
    transcript: str
    session_id: str
    cwd: str
    agent: str
    ledger: str | None
    files: list[TranscriptFile] = field(default_factory=list)
    calls: list[ReplayedCall] = field(default_factory=list)
    warnings: list[ReplayWarning] = field(default_factory=list)
    record_types: Counter[str] = field(default_factory=Counter)
    #: the definition's ``primary_arg`` per tool, for the one-line labels
    primary_args: dict[str, str] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        by_tool: dict[str, Counter[str]] = {}
        total: Counter[str] = Counter()
        for c in self.calls:
            row = by_tool.setdefault(c.tool_name, Counter())
            for counter in (row, total):
                counter["calls"] += 1
                counter[c.verdict] += 1
                counter["rewritten"] += c.rewritten
                counter["nudged"] += c.nudged
        cols = ("calls", "allowed", "denied", "asked", "rewritten", "nudged")
        return {
            **{k: total[k] for k in cols},
            "halted": sum(c.halted for c in self.calls),
            "hook_failures": sum(len(c.failures) for c in self.calls),
            "denied_originally": sum(c.original.status == "denied" for c in self.calls),
            "missing_results": sum(c.original.status == "missing" for c in self.calls),
            "by_tool": {t: {k: by_tool[t][k] for k in cols} for t in sorted(by_tool)},
        }

    def matches(self, kinds: Iterable[str]) -> bool:
        """Does any call count for one of the ``--fail-on`` kinds?"""
        kinds = list(kinds)
        return any(c.matches(k) for c in self.calls for k in kinds)

    def as_dict(self) -> dict[str, Any]:
        doc = {
            "version": JSON_VERSION,
            "transcript": self.transcript,
            "session_id": self.session_id,
            "cwd": self.cwd,
            "agent": self.agent,
            "ledger": self.ledger,
            "files": [vars(f).copy() for f in self.files],
            "record_types": dict(sorted(self.record_types.items())),
            "calls": [c.as_dict() for c in self.calls],
            "summary": self.summary(),
            "warnings": [vars(w).copy() for w in self.warnings],
        }
        return DEFAULT_REDACTOR.redact(doc)  # type: ignore[no-any-return]

    def lines(self, *, show_all: bool = False) -> list[str]:
        """The human report: notable calls (every call with ``show_all``), then a summary."""
        subs = len(self.files) - 1
        head = (
            f"replay of {self.transcript} (session {self.session_id}"
            + (f", {subs} subagent{'s' * (subs != 1)}" if subs else "")
            + f") through {self.agent!r}"
        )
        out = [head, ""]
        shown = [c for c in self.calls if show_all or c.notable]
        for c in shown:
            out.extend(self._call_lines(c))
        if not shown:
            out.append("nothing would have been denied, asked, rewritten or nudged")
        out.append("")
        out.extend(self._table())
        s = self.summary()
        if s["denied_originally"]:
            still = sum(c.original.status == "denied" and c.pre.denied for c in self.calls)
            out.append(
                f"denied by a hook in the original session: {s['denied_originally']} "
                f"(denied here too: {still})"
            )
        if s["missing_results"]:
            out.append(
                f"no result in the transcript: {s['missing_results']} (PreToolUse replayed only)"
            )
        if s["halted"]:
            out.append(f"halted: {s['halted']}")
        if s["hook_failures"]:
            out.append(f"hook failures: {s['hook_failures']}")
        unknown = {k: n for k, n in self.record_types.items() if k not in KNOWN_TYPES}
        if unknown:
            listed = ", ".join(f"{k}: {n}" for k, n in sorted(unknown.items()))
            out.append(f"skipped records of unknown types ({listed})")
        out.append(f"ledger: {self.ledger}" if self.ledger else "ledger: temporary (removed after)")
        return [DEFAULT_REDACTOR.redact_text(line) for line in out]

    def _call_lines(self, c: ReplayedCall) -> list[str]:
        where = f"{os.path.basename(c.file)}:{c.line}"
        if c.agent_id:
            where += f", agent {c.agent_id}" + (f" ({c.agent_type})" if c.agent_type else "")
        label = _label(c.tool_name, c.tool_input, self.primary_args.get(c.tool_name))
        out = [f"{c.decision:<6} {label}  [{where}]"]

        def add(key: str, text: str) -> None:
            first, *rest = (text or "").splitlines() or [""]
            out.append(f"       {key}: {first}")
            pad = " " * (9 + len(key))
            out.extend(pad + line for line in rest)

        if c.pre.halted:
            add("halt", c.pre.reason or "")
        elif c.pre.decision != "allow":
            add("reason", c.pre.reason or "")
        if c.rewritten_input is not None:
            add("rewritten input", json.dumps(c.rewritten_input, ensure_ascii=False))
        for event, hook, text in c.contexts:
            add(f"context ({event}, {hook})", text)
        if c.feedback is not None:
            add(f"feedback ({c.post.event_name if c.post else ''})", c.feedback)
        if c.rewritten_output:
            add("rewritten output", "PostToolUse replaced the result")
        if c.post is not None and c.post.halted:
            add("halt", c.post.reason or "")
        for failure in c.failures:
            add("hook failed", failure)
        o = c.original
        if o.status == "denied":
            add("originally", f"denied by a hook: {o.reason}")
        elif o.status == "rejected":
            add("originally", "rejected by the user")
        elif o.status == "missing":
            add("originally", "no result in the transcript (PreToolUse only)")
        return out

    def _table(self) -> list[str]:
        s = self.summary()
        cols = ("calls", "allowed", "denied", "asked", "rewritten", "nudged")
        rows = [(tool, [v[k] for k in cols]) for tool, v in s["by_tool"].items()]
        rows.append(("total", [s[k] for k in cols]))
        width = max(12, *(len(t) for t, _ in rows))
        fmt = f"{{:<{width}}}" + "".join(f" {{:>{max(len(k), 5)}}}" for k in cols)
        return [fmt.format("tool", *cols)] + [fmt.format(t, *v) for t, v in rows]


def _label(tool: str, tool_input: dict[str, Any], arg: str | None = None) -> str:
    """``Bash(git push --force)``: the tool and its primary argument, on one short line."""
    arg = arg or (BUILTIN_PRIMARY_ARGS.get(tool) or (None,))[0]
    value = tool_input.get(arg) if arg else None
    if not isinstance(value, str):
        return tool
    value = value.replace("\n", "↵")
    if len(value) > _LABEL_CHARS:
        value = value[: _LABEL_CHARS - 1] + "…"
    return f"{tool}({value})"


# --- reading transcripts ------------------------------------------------------------------


@dataclass(slots=True)
class _Use:
    id: str
    name: str
    input: dict[str, Any]
    file: str
    line: int
    timestamp: str | None
    cwd: str | None
    agent_id: str | None
    key: float = 0.0


@dataclass(slots=True)
class _Result:
    id: str
    is_error: bool
    content: Any
    response: Any  # the record's toolUseResult, or _ABSENT
    file: str
    line: int
    timestamp: str | None
    key: float = 0.0


@dataclass(slots=True)
class _Turn:
    file: str
    line: int
    timestamp: str | None
    key: float = 0.0


_Step = _Use | _Result | _Turn
_ABSENT: Final = object()


@dataclass
class _Parsed:
    """One file, read: its steps in file order, plus what the report needs."""

    info: TranscriptFile
    steps: list[_Step] = field(default_factory=list)
    session_id: str | None = None
    cwd: str | None = None
    #: toolUseID -> contexts hooks added in the original session
    contexts: dict[str, list[str]] = field(default_factory=dict)
    #: Agent tool_use id -> (agentId, agentType) from the Agent tool's result
    agents: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)


def _epoch(text: Any) -> float | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _text_of(content: Any) -> str:
    """A tool_result's ``content`` (a string or a list of blocks) as text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return "" if content is None else json.dumps(content, ensure_ascii=False, default=str)


def _is_prompt(rec: dict[str, Any], content: Any) -> bool:
    """A user record the person typed (starts a turn), not a tool result or a meta note."""
    if rec.get("isMeta") or rec.get("isCompactSummary") or "toolUseResult" in rec:
        return False
    text = _text_of(content).strip()  # (a record with tool results never gets here)
    return bool(text) and not text.startswith("[Request interrupted")


def _read_file(
    path: Path,
    info: TranscriptFile,
    warnings: list[ReplayWarning],
    types: Counter[str],
    *,
    main: bool,
) -> _Parsed:
    """Parse one JSONL file; raise when it cannot be read or nothing in it is a record."""
    name = str(path)
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise TranscriptError("is a directory, not a transcript file", file=name) from None
    except FileNotFoundError:
        raise TranscriptError("no such file", file=name) from None
    except OSError as exc:
        raise TranscriptError(f"cannot read: {exc.strerror or exc}", file=name) from None
    parsed = _Parsed(info)
    raw_lines = data.split(b"\n")
    ends_clean = data.endswith(b"\n")
    #: the first non-blank line, and what it is when it is not a transcript record
    first: tuple[int, str] | None = None
    seen_record = False
    local: Counter[str] = Counter()
    found: list[ReplayWarning] = []
    for n, raw in enumerate(raw_lines, 1):
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            continue
        try:
            rec = json.loads(text)
        except ValueError as exc:
            last = n == len(raw_lines) and not ends_clean
            why = (
                "truncated last line (the file ends mid-record)"
                if last and seen_record
                else f"not JSON ({getattr(exc, 'msg', exc)})"
            )
            first = first or (n, why)
            found.append(ReplayWarning(name, n, why + "; skipped"))
            continue
        if not isinstance(rec, dict):
            why = f"a JSON {_json_kind(rec)}, not a record"
            first = first or (n, why)
            found.append(ReplayWarning(name, n, why + "; skipped"))
            continue
        kind = rec.get("type")
        kind = kind if isinstance(kind, str) else NO_TYPE
        if kind in KNOWN_TYPES or isinstance(rec.get("sessionId"), str):
            seen_record = True
        first = first or (n, f"a JSON object with no transcript record type ({kind})")
        local[kind] += 1
        info.records += 1
        if parsed.session_id is None and isinstance(rec.get("sessionId"), str):
            parsed.session_id = rec["sessionId"]
        if parsed.cwd is None and isinstance(rec.get("cwd"), str):
            parsed.cwd = rec["cwd"]
        _take(rec, kind, n, name, parsed, found, main=main)
    if not seen_record:
        if first is None:
            raise TranscriptError("empty: not a Claude Code transcript", file=name)
        line, why = first
        raise TranscriptError(f"not a Claude Code transcript: {why}", file=name, line=line)
    warnings.extend(found)
    types.update(local)
    return parsed


def _json_kind(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


def _take(
    rec: dict[str, Any],
    kind: str,
    n: int,
    name: str,
    parsed: _Parsed,
    warnings: list[ReplayWarning],
    *,
    main: bool,
) -> None:
    """Turn one record into steps (tool uses, results, turns) and side facts."""
    ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
    if kind == "attachment":
        att = rec.get("attachment")
        if isinstance(att, dict) and att.get("type") == "hook_additional_context":
            tid = att.get("toolUseID")
            body = att.get("content")
            texts = body if isinstance(body, list) else [body]
            if isinstance(tid, str):
                parsed.contexts.setdefault(tid, []).extend(str(t) for t in texts if t)
        return
    if kind not in ("assistant", "user"):
        return
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    agent_id = parsed.info.agent_id
    if rec.get("isSidechain") and isinstance(rec.get("agentId"), str):
        agent_id = rec["agentId"]
    if kind == "assistant":
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            tid, tool = block.get("id"), block.get("name")
            if not isinstance(tid, str) or not isinstance(tool, str):
                warnings.append(ReplayWarning(name, n, "tool_use without an id or name; skipped"))
                continue
            tool_input = block.get("input")
            if not isinstance(tool_input, dict):
                warnings.append(
                    ReplayWarning(
                        name, n, f"tool_use {tid} has no input object; replayed with {{}}"
                    )
                )
                tool_input = {}
            cwd = rec.get("cwd") if isinstance(rec.get("cwd"), str) else None
            parsed.steps.append(_Use(tid, tool, tool_input, name, n, ts, cwd, agent_id))
        return
    blocks = content if isinstance(content, list) else []
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not results:
        if main and not rec.get("isSidechain") and _is_prompt(rec, content):
            parsed.steps.append(_Turn(name, n, ts))
        return
    # toolUseResult belongs to the record; with several results in one record it is ambiguous
    response = rec.get("toolUseResult", _ABSENT) if len(results) == 1 else _ABSENT
    for block in results:
        tid = block.get("tool_use_id")
        if not isinstance(tid, str):
            warnings.append(ReplayWarning(name, n, "tool_result without a tool_use_id; skipped"))
            continue
        parsed.steps.append(
            _Result(tid, bool(block.get("is_error")), block.get("content"), response, name, n, ts)
        )
        if isinstance(response, dict) and isinstance(response.get("agentId"), str):
            agent_type = response.get("agentType")
            parsed.agents[tid] = (
                response["agentId"],
                agent_type if isinstance(agent_type, str) else None,
            )


def _subagent_files(main: Path) -> list[Path]:
    """``<session>/subagents/**/agent-*.jsonl`` next to the main file, sorted."""
    folder = main.with_suffix("") / "subagents"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("agent-*.jsonl") if p.is_file())


def _meta(path: Path, warnings: list[ReplayWarning]) -> dict[str, Any]:
    """The ``agent-<id>.meta.json`` sidecar; missing or unusable means no metadata."""
    sidecar = path.with_name(path.name[: -len(".jsonl")] + ".meta.json")
    try:
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        warnings.append(ReplayWarning(str(sidecar), None, f"unusable sidecar ({exc}); ignored"))
        return {}
    return meta if isinstance(meta, dict) else {}


def _keys(steps: list[_Step], *, start: float) -> None:
    """Give every step a sort key: its time, else the time of the step before it."""
    first = next((t for s in steps if (t := _epoch(s.timestamp)) is not None), start)
    current = first
    for s in steps:
        t = _epoch(s.timestamp)
        current = current if t is None else t
        s.key = current


def _merge(main: list[_Step], subs: list[list[_Step]]) -> list[_Step]:
    """Merge each subagent's steps into the main timeline by time (ties: main first)."""
    out = main
    for sub in subs:
        merged: list[_Step] = []
        i = j = 0
        while i < len(out) and j < len(sub):
            if sub[j].key < out[i].key:
                merged.append(sub[j])
                j += 1
            else:
                merged.append(out[i])
                i += 1
        merged.extend(out[i:])
        merged.extend(sub[j:])
        out = merged
    return out


# --- replaying ------------------------------------------------------------------------


class _Clock:
    """The Guard's clock during a replay: the time of the record being replayed."""

    def __init__(self) -> None:
        self.now: float | None = None

    def __call__(self) -> float:
        return time.time() if self.now is None else self.now


class _ReplayLedger(Ledger):
    """A Ledger that annotates each replayed call's row with where it came from."""

    def __init__(self, path: str, *, definition: AgentDefinition) -> None:
        super().__init__(path, definition=definition)
        #: tool_use_id -> {"transcript": file, "line": n}, stored as annotations["replayed"]
        self.marks: dict[str, dict[str, Any]] = {}

    def record(
        self, decision: Decision, session: Session, now: float, *, owner_pid: int | None = None
    ) -> None:
        ev = decision.event
        mark = self.marks.get(getattr(ev, "tool_use_id", None) or "")
        if mark is not None and ev.event_name == "PreToolUse":
            decision.annotations = {**(decision.annotations or {}), "replayed": mark}
        super().record(decision, session, now, owner_pid=owner_pid)

    def finish_unrun(self, session_id: str, call_id: str, message: str, at: float) -> None:
        """A call that did not run: its pending row becomes ``interrupted``, with why."""
        from .ledger import _iso

        try:
            with self.write_transaction() as conn:
                conn.execute(
                    "UPDATE tool_calls SET status = 'interrupted', finished_at = ?, "
                    "error_message = ? WHERE session_id = ? AND tool_call_id = ? "
                    "AND status = 'pending'",
                    (_iso(at), self.redactor.redact_text(message), session_id, call_id),
                )
        except LedgerError:
            pass  # a degraded ledger: the row stays pending, as it would live


def _original(result: _Result) -> Original:
    text = _text_of(result.content)
    response = result.response
    if result.is_error or isinstance(response, str):
        for candidate in (response, text):
            m = _HOOK_DENIED.fullmatch(candidate.strip()) if isinstance(candidate, str) else None
            if m is not None:
                return Original("denied", m.group(2).strip(), result.line)
        if response in _USER_REJECTED or text.startswith(_USER_REJECTED):
            return Original("rejected", text or str(response), result.line)
    if result.is_error:
        interrupted = isinstance(response, dict) and response.get("interrupted") is True
        return Original("interrupted" if interrupted else "error", text, result.line)
    return Original("ok", None, result.line)


class _Replayer:
    """Walks the merged timeline, emitting each call's events on one session."""

    def __init__(
        self,
        session: Session,
        ledger: _ReplayLedger,
        clock: _Clock,
        report: ReplayReport,
        agent_types: dict[str | None, str | None],
        contexts: dict[str, list[str]],
        main_path: str,
    ) -> None:
        self.session = session
        self.ledger = ledger
        self.clock = clock
        self.report = report
        self.agent_types = agent_types
        self.contexts = contexts
        self.main_path = main_path
        self.calls: dict[str, ReplayedCall] = {}
        self.held: dict[str, _Result] = {}

    def warn(self, file: str, line: int | None, message: str) -> None:
        self.report.warnings.append(ReplayWarning(file, line, message))

    def run(self, timeline: list[_Step]) -> None:
        for step in timeline:
            if step.timestamp is not None:
                self.clock.now = _epoch(step.timestamp) or self.clock.now
            if isinstance(step, _Turn):
                self.session.new_turn()
            elif isinstance(step, _Use):
                self.use(step)
            else:
                self.result(step)
        for tid, held in self.held.items():
            self.warn(held.file, held.line, f"tool_result for {tid} has no tool_use; skipped")
        for call in self.report.calls:
            if call.original.status == "missing":
                self.ledger.finish_unrun(
                    self.session.session_id,
                    call.tool_use_id,
                    "replay: the transcript has no result for this call",
                    self.clock(),
                )

    def use(self, use: _Use) -> None:
        first = self.calls.get(use.id)
        if first is not None:
            self.warn(
                use.file,
                use.line,
                f"tool_use {use.id} repeated (first at {os.path.basename(first.file)}:"
                f"{first.line}); skipped",
            )
            return
        agent_type = self.agent_types.get(use.agent_id)
        self.ledger.marks[use.id] = {"transcript": use.file, "line": use.line}
        event = PreToolUse(
            session_id=self.session.session_id,
            transcript_path=self.main_path,
            cwd=use.cwd or self.session.cwd,
            tool_name=use.name,
            tool_input=copy.deepcopy(use.input),
            tool_use_id=use.id,
            agent_id=use.agent_id,
            agent_type=agent_type,
        )
        pre = self.session.emit_sync(event)
        call = ReplayedCall(
            index=len(self.report.calls) + 1,
            tool_use_id=use.id,
            tool_name=use.name,
            tool_input=use.input,
            file=use.file,
            line=use.line,
            timestamp=use.timestamp,
            agent_id=use.agent_id,
            agent_type=agent_type,
            pre=pre,
            original=Original(context=list(self.contexts.get(use.id, ()))),
        )
        self.calls[use.id] = call
        self.report.calls.append(call)
        held = self.held.pop(use.id, None)
        if held is not None:
            self.warn(
                held.file,
                held.line,
                f"tool_result for {use.id} comes before its tool_use "
                f"({os.path.basename(use.file)}:{use.line}); replayed after it",
            )
            self.result(held)

    def result(self, result: _Result) -> None:
        call = self.calls.get(result.id)
        if call is None:
            if result.id in self.held:
                self.warn(
                    result.file, result.line, f"tool_result for {result.id} repeated; skipped"
                )
            else:
                self.held[result.id] = result
            return
        if call.original.line is not None:
            self.warn(result.file, result.line, f"tool_result for {result.id} repeated; skipped")
            return
        context = call.original.context
        call.original = _original(result)
        call.original.context = context
        pre = call.pre
        if not call.original.ran:
            self.ledger.finish_unrun(
                self.session.session_id,
                call.tool_use_id,
                f"replay: did not run in the original session ({call.original.status}: "
                f"{call.original.reason})",
                self.clock(),
            )
            return
        if pre.denied:
            return  # with this definition the call would not have run: nothing to follow up
        fields: dict[str, Any] = {
            "session_id": self.session.session_id,
            "transcript_path": self.main_path,
            "cwd": pre.event.cwd,
            "tool_name": call.tool_name,
            "tool_input": copy.deepcopy(pre.tool_input or {}),
            "tool_use_id": call.tool_use_id,
            "agent_id": call.agent_id,
            "agent_type": call.agent_type,
        }
        post: PostToolUse | PostToolUseFailure
        if call.original.status == "ok":
            response = result.response if result.response is not _ABSENT else result.content
            post = PostToolUse(tool_response=copy.deepcopy(response), **fields)
        else:
            post = PostToolUseFailure(
                error=call.original.reason or "",
                is_interrupt=True if call.original.status == "interrupted" else None,
                **fields,
            )
        call.post = self.session.emit_sync(post)


def replay_transcript(
    transcript: str | os.PathLike[str],
    definition: AgentDefinition | str | os.PathLike[str],
    *,
    ledger: str | os.PathLike[str] | None = None,
) -> ReplayReport:
    """Replay ``transcript`` (and its subagents) through ``definition``; no tool runs.

    ``ledger``: record into this file (refused when it already holds the session);
    ``None``: a temporary ledger, removed afterwards. See the module docstring.
    """
    main = Path(transcript)
    warnings: list[ReplayWarning] = []
    types: Counter[str] = Counter()
    parsed = _read_file(main, TranscriptFile(str(main)), warnings, types, main=True)
    if not isinstance(definition, AgentDefinition):
        definition = AgentDefinition.from_file(definition)  # after the transcript: errors in order
    subs = _read_subagents(main, warnings, types)
    _link_agents(parsed, subs)
    agent_types: dict[str | None, str | None] = {p.info.agent_id: p.info.agent_type for p in subs}
    contexts: dict[str, list[str]] = {}
    for p in (parsed, *subs):
        for tid, texts in p.contexts.items():
            contexts.setdefault(tid, []).extend(texts)
    _keys(parsed.steps, start=0.0)
    for p in subs:
        _keys(p.steps, start=float("inf"))  # no times at all: after the main file
    timeline = _merge(parsed.steps, [p.steps for p in subs])
    session_id = parsed.session_id or main.stem
    cwd = parsed.cwd or os.getcwd()
    report = ReplayReport(
        transcript=str(main),
        session_id=session_id,
        cwd=cwd,
        agent=definition.name,
        ledger=None,
        files=[parsed.info, *(p.info for p in subs)],
        warnings=warnings,
        record_types=types,
        primary_args={n: t.primary_arg for n, t in definition.tools.items() if t.primary_arg},
    )
    with _replay_ledger(ledger, definition, session_id) as led:
        report.ledger = None if ledger is None else led.path
        clock = _Clock()
        guard = Guard(definition, ledger=led, clock=clock, cwd=cwd)
        session = guard.session(session_id, cwd=cwd)
        replayer = _Replayer(
            session, led, clock, report, agent_types, contexts, str(main.absolute())
        )
        replayer.run(timeline)
    return report


def _read_subagents(
    main: Path, warnings: list[ReplayWarning], types: Counter[str]
) -> list[_Parsed]:
    """Each readable ``agent-<id>.jsonl`` beside ``main``, with its sidecar's facts."""
    subs: list[_Parsed] = []
    for path in _subagent_files(main):
        meta = _meta(path, warnings)
        agent_type, parent = meta.get("agentType"), meta.get("toolUseId")
        info = TranscriptFile(
            str(path),
            agent_id=path.name[len("agent-") : -len(".jsonl")],
            agent_type=agent_type if isinstance(agent_type, str) else None,
            parent_tool_use_id=parent if isinstance(parent, str) else None,
        )
        try:
            subs.append(_read_file(path, info, warnings, types, main=False))
        except TranscriptError as exc:  # one bad subagent file does not stop the replay
            warnings.append(ReplayWarning(str(path), exc.line, f"{exc.message}; skipped"))
    return subs


@contextlib.contextmanager
def _replay_ledger(
    path: str | os.PathLike[str] | None, definition: AgentDefinition, session_id: str
) -> Iterator[_ReplayLedger]:
    """The ledger the replay records into: ``path``, else a temporary file removed after."""
    tmpdir = tempfile.mkdtemp(prefix="hookrails-replay-") if path is None else None
    try:
        led = _ReplayLedger(
            os.path.join(tmpdir, "ledger.db") if tmpdir else os.fspath(path or ""),
            definition=definition,
        )
        try:
            if led.degraded is not None:
                raise LedgerError(f"cannot be written ({led.degraded})", path=led.path)
            if tmpdir is None:
                _refuse_known_session(led, session_id)
            yield led
        finally:
            led.close()
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)


def _refuse_known_session(led: Ledger, session_id: str) -> None:
    known = led.reader.value(
        "SELECT EXISTS (SELECT 1 FROM sessions WHERE session_id = ?)", (session_id,)
    )
    if known:
        raise LedgerError(
            f"already holds session {session_id} (recorded live or replayed before); "
            "replay into another file",
            path=led.path,
            kind="exists",
        )


def _link_agents(main: _Parsed, subs: list[_Parsed]) -> None:
    """Fill each subagent's type and parent call from the sidecar, else from the Agent call."""
    uses = {s.id: s for p in (main, *subs) for s in p.steps if isinstance(s, _Use)}
    by_agent: dict[str, tuple[str, str | None]] = {}
    for p in (main, *subs):
        for tid, (agent_id, agent_type) in p.agents.items():
            if agent_id is not None:
                by_agent[agent_id] = (tid, agent_type)
    for p in subs:
        info = p.info
        linked = by_agent.get(info.agent_id or "")
        if info.parent_tool_use_id is None and linked is not None:
            info.parent_tool_use_id = linked[0]
        if info.agent_type is None and linked is not None:
            info.agent_type = linked[1]
        parent = uses.get(info.parent_tool_use_id or "")
        if info.agent_type is None and parent is not None:
            kind = parent.input.get("subagent_type")
            info.agent_type = kind if isinstance(kind, str) else None
