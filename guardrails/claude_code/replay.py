"""``hookrails replay``: what a definition would have decided in a recorded Claude Code session.

The transcript (``~/.claude/projects/<project>/<session>.jsonl``) and its subagent
transcripts (``<session>/subagents/**/agent-<id>.jsonl``, found next to it) are read
and paired by ``_transcript``; here every ``tool_use`` runs through the Guard as
``PreToolUse``, then ``PostToolUse`` (or ``PostToolUseFailure`` when the result is an
error), with the transcript's ``session_id`` and each record's ``cwd``. **No tool
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
  line that is not JSON or nested too deeply, a truncated last line, a ``tool_use``
  logged twice, a result with no ``tool_use`` and an unreadable subagent file are
  warnings (``_transcript`` lists them all). A ``tool_use`` id used again for a
  different input is a call of its own, replayed as ``<id>#<n>`` with a note. A
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
post-event feedback (a ``PostToolUse`` block). A call's ``tool_use_id`` is the id it
was replayed (and recorded) under: the transcript's, or ``<id>#<n>`` for a repeated id.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .._redaction import DEFAULT_REDACTOR
from ..definition.matchers import BUILTIN_PRIMARY_ARGS
from ..definition.model import AgentDefinition
from ..dispatch.guard import Guard
from ..errors import LedgerError
from ..events import PostToolUse, PostToolUseFailure, PreToolUse
from ..ledger.common import escape_surrogates
from ..ledger.sqlite import Ledger
from ..results import UNSET
from .transcript import (
    KNOWN_TYPES,
    Call,
    Original,
    Outcome,
    ReplayWarning,
    Step,
    TranscriptFile,
    Turn,
    epoch,
    read_transcript,
)

if TYPE_CHECKING:
    from ..dispatch.session import Session
    from ..ledger.session_state import Settled, StateChange
    from ..results import Decision

__all__ = [
    "Original",
    "ReplayReport",
    "ReplayWarning",
    "ReplayedCall",
    "TranscriptFile",
    "replay_transcript",
]

JSON_VERSION: Final = 1
_LABEL_CHARS = 100


# --- what the report holds ------------------------------------------------------------


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
    #: about the call itself (a repeated tool_use id), before the decisions' notes
    notes: list[str] = field(default_factory=list)

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
            or bool(self.notes)
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
        notes = [*self.notes, *(n for d in (self.pre, self.post) if d is not None for n in d.notes)]
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

    def to_json(self) -> str:
        """:meth:`as_dict` as JSON text (``--json``). UTF-8 cannot hold a lone surrogate
        (a ``"\\ud800"`` in a recorded input), so one is written as that JSON escape:
        the document reads back the same."""
        text = json.dumps(self.as_dict(), indent=2, ensure_ascii=False, default=str)
        return escape_surrogates(text)

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
        # a lone surrogate (see to_json) is shown as its \\udXXX escape: it cannot be printed
        return [escape_surrogates(DEFAULT_REDACTOR.redact_text(line)) for line in out]

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

        for note in c.notes:
            add("note", note)
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
        self,
        decision: Decision,
        now: float,
        *,
        agent: str,
        tenant: str | None,
        owner_pid: int | None = None,
        change: StateChange | None = None,
    ) -> Settled | None:
        ev = decision.event
        mark = self.marks.get(getattr(ev, "tool_use_id", None) or "")
        if mark is not None and ev.event_name == "PreToolUse":
            decision.annotations = {**(decision.annotations or {}), "replayed": mark}
        return super().record(
            decision, now, agent=agent, tenant=tenant, owner_pid=owner_pid, change=change
        )

    def finish_unrun(self, session_id: str, call_id: str, message: str, at: float) -> None:
        """A call that did not run: its pending row becomes ``interrupted``, with why."""
        with contextlib.suppress(LedgerError):  # degraded: the row stays pending, as live
            self.mark_interrupted(session_id, call_id, message, at)


class _Replayer:
    """Walks the paired timeline, emitting each call's events on one session."""

    def __init__(
        self,
        session: Session,
        ledger: _ReplayLedger,
        clock: _Clock,
        report: ReplayReport,
        main_path: str,
    ) -> None:
        self.session = session
        self.ledger = ledger
        self.clock = clock
        self.report = report
        self.main_path = main_path
        self.calls: dict[int, ReplayedCall] = {}  # id(Call) -> its replayed call

    def run(self, steps: list[Step]) -> None:
        for step in steps:
            if step.timestamp is not None:
                self.clock.now = epoch(step.timestamp) or self.clock.now
            try:
                if isinstance(step, Turn):
                    self.session.new_turn()
                elif isinstance(step, Call):
                    self.call(step)
                else:
                    self.outcome(step)
            except RecursionError:  # what MAX_DEPTH did not catch: this step, not the replay
                record = (
                    step.use
                    if isinstance(step, Call)
                    else step.result
                    if isinstance(step, Outcome)
                    else step
                )
                self.report.warnings.append(
                    ReplayWarning(record.file, record.line, "nested too deeply to replay; skipped")
                )
        for call in self.report.calls:
            if call.original.status == "missing":
                self.ledger.finish_unrun(
                    self.session.session_id,
                    call.tool_use_id,
                    "replay: the transcript has no result for this call",
                    self.clock(),
                )

    def call(self, step: Call) -> None:
        use = step.use
        self.ledger.marks[step.call_id] = {"transcript": use.file, "line": use.line}
        event = PreToolUse(
            session_id=self.session.session_id,
            transcript_path=self.main_path,
            cwd=use.cwd or self.session.cwd,
            tool_name=use.name,
            tool_input=copy.deepcopy(use.input),
            tool_use_id=step.call_id,
            agent_id=use.agent_id,
            agent_type=step.agent_type,
        )
        pre = self.session.emit_sync(event)
        call = ReplayedCall(
            index=len(self.report.calls) + 1,
            tool_use_id=step.call_id,
            tool_name=use.name,
            tool_input=use.input,
            file=use.file,
            line=use.line,
            timestamp=use.timestamp,
            agent_id=use.agent_id,
            agent_type=step.agent_type,
            pre=pre,
            original=Original(context=list(step.context)),
            notes=list(step.notes),
        )
        self.calls[id(step)] = call
        self.report.calls.append(call)

    def outcome(self, step: Outcome) -> None:
        call = self.calls.get(id(step.call))
        if call is None:  # its call was skipped (too deep to replay)
            return
        call.original = Original(
            step.original.status,
            step.original.reason,
            step.original.line,
            call.original.context,
        )
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
            post = PostToolUse(tool_response=copy.deepcopy(step.result.output), **fields)
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
    read = read_transcript(transcript)
    if not isinstance(definition, AgentDefinition):
        definition = AgentDefinition.from_file(definition)  # after the transcript: errors in order
    session_id = read.session_id
    cwd = read.cwd or os.getcwd()
    report = ReplayReport(
        transcript=read.path,
        session_id=session_id,
        cwd=cwd,
        agent=definition.name,
        ledger=None,
        files=read.files,
        warnings=read.warnings,
        record_types=read.record_types,
        primary_args={n: t.primary_arg for n, t in definition.tools.items() if t.primary_arg},
    )
    with _replay_ledger(ledger, definition, session_id) as led:
        report.ledger = None if ledger is None else led.path
        clock = _Clock()
        guard = Guard(definition, ledger=led, clock=clock, cwd=cwd)
        session = guard.session(session_id, cwd=cwd)
        main_path = str(Path(transcript).absolute())
        _Replayer(session, led, clock, report, main_path).run(read.steps)
    return report


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
    if led.reader.has_session(session_id):
        raise LedgerError(
            f"already holds session {session_id} (recorded live or replayed before); "
            "replay into another file",
            path=led.path,
            kind="exists",
        )
