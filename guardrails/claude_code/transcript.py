"""Reading a recorded Claude Code session for ``hookrails replay``: records in, paired
calls out. Nothing here runs a hook (``_replay`` does, through the Guard).

:func:`read_transcript` reads the main transcript and its subagent transcripts
(``<session>/subagents/**/agent-<id>.jsonl``, with their ``.meta.json``
sidecars), merges them into one timeline by time (ties: main first; a file
without times goes after the main one) and pairs each ``tool_use`` with its
``tool_result`` by id. What comes out is a list of steps in the order they
happened: a :class:`Call` (replay its ``PreToolUse``), an :class:`Outcome` (its
result: replay the post event, or finish it as not run), a :class:`Turn` (a user
prompt in the main transcript).

Mess, as warnings with the file and line (the step is skipped unless said):

* a blank line or a record of an unknown type: skipped silently (types counted);
* a line that is not JSON, a truncated last line, a line nested more than
  :data:`MAX_DEPTH` levels (or too deeply to parse at all), a JSON value that is
  not an object;
* a ``tool_use`` without an id or name; without an input object (replayed with ``{}``);
* a ``tool_use`` whose id was seen before: with the same tool and input it is the
  same call logged twice (skipped); with a different one it is a call of its
  own, replayed as ``<id>#<n>`` (a warning, and a note on the call);
* a ``tool_result`` before its ``tool_use`` (held, and paired right after it),
  one for a call already answered, one whose ``tool_use`` never comes;
* an unreadable subagent file or sidecar.

A missing main file, one with no transcript record at all, is a
:class:`~guardrails.errors.TranscriptError` naming the file (and line).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from ..errors import TranscriptError

__all__ = [
    "KNOWN_TYPES",
    "MAX_DEPTH",
    "NO_TYPE",
    "Call",
    "Original",
    "Outcome",
    "ReplayWarning",
    "Step",
    "ToolResult",
    "ToolUse",
    "Transcript",
    "TranscriptFile",
    "Turn",
    "epoch",
    "read_transcript",
]

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
#: a record nested deeper is skipped: replaying it (copies, hooks, redaction) would
#: exhaust Python's recursion limit, and no real record comes near it
MAX_DEPTH: Final = 100
#: ``"Error: PreToolUse:Bash hook error: [cmd]: reason"``: a hook denied the call there
_HOOK_DENIED = re.compile(
    r"(?:Error: )?(PreToolUse:\S+) hook error: (?:\[(?:[^\[\]]|\[[^\[\]]*\])*\]:\s*)?(.*)", re.S
)
_USER_REJECTED: Final = (
    "User rejected tool use",
    "The user doesn't want to proceed with this tool use",
)
_NOT_RUN: Final = frozenset({"denied", "rejected", "missing"})
_ABSENT: Final = object()


# --- what a transcript holds ----------------------------------------------------------


@dataclass
class ReplayWarning:
    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        from ..ledger.common import escape_surrogates  # an id may hold a lone surrogate

        where = f"{self.file}:{self.line}" if self.line else self.file
        return escape_surrogates(f"{where}: {self.message}")


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


@dataclass(slots=True)
class ToolUse:
    """A ``tool_use`` block, as read."""

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
class ToolResult:
    """A ``tool_result`` block, as read; ``response`` is the record's ``toolUseResult``."""

    id: str
    is_error: bool
    content: Any
    response: Any  # _ABSENT when the record has none (or several results share it)
    file: str
    line: int
    timestamp: str | None
    key: float = 0.0

    @property
    def output(self) -> Any:
        """What the tool answered: ``toolUseResult``, else the block's ``content``."""
        return self.response if self.response is not _ABSENT else self.content


@dataclass(slots=True)
class Turn:
    """A prompt the person typed in the main transcript: a new turn starts."""

    file: str
    line: int
    timestamp: str | None
    key: float = 0.0


@dataclass(slots=True)
class Call:
    """A ``tool_use`` to replay. ``call_id`` is its id, or ``<id>#<n>`` when the id was
    used before for another input; ``context`` is what hooks added to it originally."""

    use: ToolUse
    call_id: str
    agent_type: str | None
    context: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def timestamp(self) -> str | None:
        return self.use.timestamp


@dataclass(slots=True)
class Outcome:
    """A call's result and what it says happened. ``timestamp`` is ``None`` for a result
    held until its ``tool_use`` (it happens then)."""

    call: Call
    result: ToolResult
    original: Original
    timestamp: str | None


Step = Call | Outcome | Turn
_Read = ToolUse | ToolResult | Turn


@dataclass
class Transcript:
    """A session, read and paired: its steps in order, and what the report needs."""

    path: str
    session_id: str
    cwd: str | None
    files: list[TranscriptFile]
    steps: list[Step]
    record_types: Counter[str]
    warnings: list[ReplayWarning]


# --- reading ---------------------------------------------------------------------------


@dataclass
class _Parsed:
    """One file, read: its records' steps in file order, plus side facts."""

    info: TranscriptFile
    steps: list[_Read] = field(default_factory=list)
    session_id: str | None = None
    cwd: str | None = None
    #: toolUseID -> contexts hooks added in the original session
    contexts: dict[str, list[str]] = field(default_factory=dict)
    #: Agent tool_use id -> (agentId, agentType) from the Agent tool's result
    agents: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)


def read_transcript(path: str | os.PathLike[str]) -> Transcript:
    """Read ``path`` and its subagents, merge them by time and pair calls with results."""
    main = Path(path)
    warnings: list[ReplayWarning] = []
    types: Counter[str] = Counter()
    parsed = _read_file(main, TranscriptFile(str(main)), warnings, types, main=True)
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
    steps = _pair(timeline, agent_types, contexts, warnings)
    return Transcript(
        path=str(main),
        session_id=parsed.session_id or main.stem,
        cwd=parsed.cwd,
        files=[parsed.info, *(p.info for p in subs)],
        steps=steps,
        record_types=types,
        warnings=warnings,
    )


def epoch(text: Any) -> float | None:
    """An ISO timestamp (``...Z``) as seconds since the epoch; ``None`` if it is not one."""
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


def _too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests objects and arrays more than ``limit`` deep (iteratively)."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict | list):
            if depth > limit:
                return True
            stack.extend((c, depth + 1) for c in (v.values() if isinstance(v, dict) else v))
    return False


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
        why = None
        try:
            rec = json.loads(text)
        except RecursionError:
            why = "nested too deeply to read"
        except ValueError as exc:
            last = n == len(raw_lines) and not ends_clean
            why = (
                "truncated last line (the file ends mid-record)"
                if last and seen_record
                else f"not JSON ({getattr(exc, 'msg', exc)})"
            )
        else:
            if not isinstance(rec, dict):
                why = f"a JSON {_json_kind(rec)}, not a record"
            elif _too_deep(rec):
                why = f"nested more than {MAX_DEPTH} levels deep"
        if why is not None:
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
            parsed.steps.append(ToolUse(tid, tool, tool_input, name, n, ts, cwd, agent_id))
        return
    blocks = content if isinstance(content, list) else []
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not results:
        if main and not rec.get("isSidechain") and _is_prompt(rec, content):
            parsed.steps.append(Turn(name, n, ts))
        return
    # toolUseResult belongs to the record; with several results in one record it is ambiguous
    response = rec.get("toolUseResult", _ABSENT) if len(results) == 1 else _ABSENT
    for block in results:
        tid = block.get("tool_use_id")
        if not isinstance(tid, str):
            warnings.append(ReplayWarning(name, n, "tool_result without a tool_use_id; skipped"))
            continue
        parsed.steps.append(
            ToolResult(
                tid, bool(block.get("is_error")), block.get("content"), response, name, n, ts
            )
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
    except (OSError, ValueError, RecursionError) as exc:
        warnings.append(ReplayWarning(str(sidecar), None, f"unusable sidecar ({exc}); ignored"))
        return {}
    return meta if isinstance(meta, dict) else {}


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


def _link_agents(main: _Parsed, subs: list[_Parsed]) -> None:
    """Fill each subagent's type and parent call from the sidecar, else from the Agent call."""
    uses = {s.id: s for p in (main, *subs) for s in p.steps if isinstance(s, ToolUse)}
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


def _keys(steps: list[_Read], *, start: float) -> None:
    """Give every step a sort key: its time, else the time of the step before it."""
    first = next((t for s in steps if (t := epoch(s.timestamp)) is not None), start)
    current = first
    for s in steps:
        t = epoch(s.timestamp)
        current = current if t is None else t
        s.key = current


def _merge(main: list[_Read], subs: list[list[_Read]]) -> list[_Read]:
    """Merge each subagent's steps into the main timeline by time (ties: main first)."""
    out = main
    for sub in subs:
        merged: list[_Read] = []
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


# --- pairing ---------------------------------------------------------------------------


def _pair(
    timeline: list[_Read],
    agent_types: dict[str | None, str | None],
    contexts: dict[str, list[str]],
    warnings: list[ReplayWarning],
) -> list[Step]:
    """Calls and outcomes in the order they happened (see the module docstring)."""
    out: list[Step] = []
    seen: dict[str, list[Call]] = {}  # every call made under an id
    waiting: dict[str, deque[Call]] = {}  # calls still without a result, oldest first
    held: dict[str, ToolResult] = {}  # results that came before their tool_use

    def warn(file: str, line: int | None, message: str) -> None:
        warnings.append(ReplayWarning(file, line, message))

    for step in timeline:
        if isinstance(step, Turn):
            out.append(step)
        elif isinstance(step, ToolUse):
            call = _call(step, seen, agent_types, contexts, warn)
            if call is None:
                continue
            seen.setdefault(step.id, []).append(call)
            out.append(call)
            early = held.pop(step.id, None)
            if early is None:
                waiting.setdefault(step.id, deque()).append(call)
                continue
            warn(
                early.file,
                early.line,
                f"tool_result for {step.id} comes before its tool_use "
                f"({os.path.basename(step.file)}:{step.line}); replayed after it",
            )
            out.append(Outcome(call, early, _original(early), None))
        else:
            queue = waiting.get(step.id)
            if queue:
                out.append(Outcome(queue.popleft(), step, _original(step), step.timestamp))
            elif step.id in seen or step.id in held:
                warn(step.file, step.line, f"tool_result for {step.id} repeated; skipped")
            else:
                held[step.id] = step
    for tid, early in held.items():
        warn(early.file, early.line, f"tool_result for {tid} has no tool_use; skipped")
    return out


def _call(
    use: ToolUse,
    seen: dict[str, list[Call]],
    agent_types: dict[str | None, str | None],
    contexts: dict[str, list[str]],
    warn: Any,
) -> Call | None:
    """The call for ``use``; ``None`` (with a warning) when it repeats an earlier one."""
    earlier = seen.get(use.id, [])
    same = next((c for c in earlier if (c.use.name, c.use.input) == (use.name, use.input)), None)
    if same is not None:
        where = f"{os.path.basename(same.use.file)}:{same.use.line}"
        warn(use.file, use.line, f"tool_use {use.id} repeated (first at {where}); skipped")
        return None
    call = Call(use, use.id, agent_types.get(use.agent_id), list(contexts.get(use.id, ())))
    if earlier:
        call.call_id = f"{use.id}#{len(earlier) + 1}"
        first = earlier[0].use
        note = (
            f"tool_use id {use.id} repeated with a different "
            f"{'tool' if first.name != use.name else 'input'} (first at "
            f"{os.path.basename(first.file)}:{first.line}); replayed as a call of its own, "
            f"{call.call_id}"
        )
        call.notes.append(note)
        warn(use.file, use.line, note)
    return call


def _original(result: ToolResult) -> Original:
    """What a result says happened in the recorded session."""
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
