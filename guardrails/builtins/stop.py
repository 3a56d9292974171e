"""Gates: keep an agent working until its artifacts exist (``require_artifacts``) or until
it says it is done (``completion_promise``).

They gate the events that end a piece of work (:data:`GATE_EVENTS`): an agent's or a
subagent's stop, a teammate going idle (TeammateIdle), a task marked completed
(TaskCompleted) and a task being created (TaskCreated); a block keeps the work going
(the task is not marked completed, or not created) with the reason.

Both count the blocks they gave in a row, per session, event and agent (a subagent's or
a teammate's ``agent_id``): from the ledger's ``hook_runs`` when one is attached (so a
Claude command hook, a new process per event, keeps the count), else in ``ctx.state``.
A stop the host flags ``stop_hook_active`` counts as at least one earlier block. Each
gives up on its own, before the Guard's (and Claude Code's) cap of 8 consecutive stop
blocks, and says so in a system message; on the task and teammate events, where Claude
has no cap, theirs is the only one.
"""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ..definition.matchers import compile_glob
from ..errors import GuardrailsError, HookFailure
from ..events import STOP_EVENTS
from ..results import STOP_BLOCK_CAP, HookResult

__all__ = ["GATE_EVENTS", "CompletionPromise", "RequireArtifacts", "completion_promise"]

#: the events these gates answer: a block keeps the agent, subagent or teammate working
GATE_EVENTS: Final = frozenset(STOP_EVENTS | {"TeammateIdle", "TaskCompleted", "TaskCreated"})

#: files examined per artifact glob at most (a stop hook must answer within its timeout)
_MAX_FILES: Final = 100
#: bytes of a JSON artifact read at most
_MAX_JSON_BYTES: Final = 16 * 1024 * 1024
#: bytes read from the end of a transcript when the host sent no last_assistant_message
_TRANSCRIPT_TAIL: Final = 1024 * 1024


def _lead(event: Any) -> str:
    """What a block does on a task or teammate event, said first (a stop says nothing)."""
    name = event.event_name
    if name == "TaskCompleted":
        subject = f" ({event.task_subject})" if event.task_subject else ""
        return f"Task {event.task_id}{subject} is not marked completed. "
    if name == "TaskCreated":
        return f"Task {event.task_subject or event.task_id!r} was not created. "
    if name == "TeammateIdle":
        return f"Teammate {event.teammate_name} keeps working instead of going idle. "
    return ""


def _where_to_promise(event: Any) -> str:
    """Where the agent writes the promise for the gate on ``event`` to read it."""
    name = event.event_name
    if name == "TaskCompleted":
        return "write {token} in the message that marks it completed"
    if name == "TaskCreated":
        return "write {token} in a message before you create it"
    return "end your reply with {token}"


def _sid(event: Any, ctx: Any) -> str:
    """The session id the ledger records this event under."""
    return str(event.session_id or ctx.session_id)


class _BlockCount:
    """Consecutive stops one hook blocked, per (session, agent)."""

    def __init__(self, owner: object) -> None:
        self.key = f"{type(owner).__name__}@{id(owner):x}"

    def so_far(self, event: Any, ctx: Any, cap: int) -> int:
        agent = event.agent_id or ""
        mine: dict[str, int] = ctx.state.setdefault(self.key, {})
        n = mine.get(agent, 0)
        if ctx.ledger is not None:
            try:
                run = ctx.ledger.hook_blocks_in_a_row(
                    _sid(event, ctx), event.event_name, ctx.hook_name, event.agent_id, cap + 1
                )
            except GuardrailsError:  # unreadable ledger: this process's count will do
                run = 0
            n = max(n, run)  # a degraded ledger lags behind ctx.state, never ahead
        if getattr(event, "stop_hook_active", None):
            n = max(n, 1)
        return n

    def set(self, event: Any, ctx: Any, n: int) -> None:
        ctx.state.setdefault(self.key, {})[event.agent_id or ""] = n


def _last_assistant_text(path: str | None) -> str | None:
    """The text of the last assistant record of a Claude transcript (JSONL), if readable.

    For hosts that send no ``last_assistant_message``; reads only the file's tail.
    """
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - _TRANSCRIPT_TAIL))
            tail = f.read()
    except OSError:
        return None
    for line in reversed(tail.splitlines()):
        if b'"assistant"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("type") != "assistant":
            continue
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [
                b["text"]
                for b in content
                if isinstance(b, dict)
                and b.get("type") == "text"
                and isinstance(b.get("text"), str)
            ]
            if texts:
                return "\n".join(texts)
    return None


def _last_message(event: Any) -> str:
    text = getattr(event, "last_assistant_message", None)
    if text is None:
        path = getattr(event, "agent_transcript_path", None) or event.transcript_path
        text = _last_assistant_text(path)
    return text or ""


class CompletionPromise:
    """Keep the agent going until its last message holds the completion promise.

    The "keep going until done" loop: every stop whose last assistant message
    lacks ``<promise>DONE</promise>`` (``tagged=False``: the bare text, as a
    substring) is blocked with ``message`` (e.g. the task itself; else a
    generic "keep working") and the iteration count. The agent gets at most
    ``max_iterations`` turns in all: the stop ending the last one is let
    through, with a system message saying the promise never came. A tag is the
    default because a bare word is easily said in passing ("not DONE yet").
    The promise text is case-sensitive; whitespace inside the tag is free.

    ``max_iterations`` is at most 9: the Guard, like Claude Code, lets a stop
    through after 8 consecutive blocks, so a larger value could never be
    reached. Works on ``AgentStop`` and ``SubagentStop`` (counted per subagent), and on
    ``TeammateIdle``, ``TaskCompleted`` and ``TaskCreated`` (:data:`GATE_EVENTS`), where
    the promise is read from the end of the transcript.
    When the host sends no ``last_assistant_message``, the end of the transcript
    is read instead.
    """

    hook_name = "completion_promise"

    def __init__(
        self,
        promise: str = "DONE",
        max_iterations: int = 5,
        message: str | None = None,
        tagged: bool = True,
    ) -> None:
        if not isinstance(promise, str) or not promise.strip():
            raise ValueError(f"promise must be a non-empty string, got {promise!r}")
        if (
            isinstance(max_iterations, bool)
            or not isinstance(max_iterations, int)
            or not 1 <= max_iterations <= STOP_BLOCK_CAP + 1
        ):
            raise ValueError(
                f"max_iterations must be an integer from 1 to {STOP_BLOCK_CAP + 1} (the Guard "
                f"lets a stop through after {STOP_BLOCK_CAP} consecutive blocks), "
                f"got {max_iterations!r}"
            )
        if message is not None and (not isinstance(message, str) or not message.strip()):
            raise ValueError(f"message must be a non-empty string or None, got {message!r}")
        if not isinstance(tagged, bool):
            raise ValueError(f"tagged must be true or false, got {tagged!r}")
        self.promise = promise.strip()
        self.max_iterations = max_iterations
        self.message = message
        self.tagged = tagged
        self.token = f"<promise>{self.promise}</promise>" if tagged else self.promise
        words = r"\s+".join(map(re.escape, self.promise.split()))
        self._tag = re.compile(rf"<promise>\s*{words}\s*</promise>")
        self._count = _BlockCount(self)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"CompletionPromise({self.promise!r}, max_iterations={self.max_iterations}, "
            f"tagged={self.tagged})"
        )

    def kept(self, text: str) -> bool:
        """Does ``text`` hold the promise?"""
        if self.tagged:
            return self._tag.search(text) is not None
        return self.promise in text

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        if event.event_name not in GATE_EVENTS:
            return None
        text = _last_message(event)
        with self._lock:
            blocked = self._count.so_far(event, ctx, self.max_iterations)
            iteration = blocked + 1
            if self.kept(text):
                self._count.set(event, ctx, 0)
                return HookResult(
                    decision="allow",
                    reason=f"Completion promise {self.token} found in iteration {iteration}.",
                )
            if iteration >= self.max_iterations:
                self._count.set(event, ctx, 0)
                note = (
                    f"completion_promise: letting the agent stop after {iteration} iteration"
                    f"{'s' if iteration != 1 else ''} without the completion promise "
                    f"{self.token} (max_iterations={self.max_iterations})."
                )
                return HookResult(decision="allow", reason=note, system_message=note)
            self._count.set(event, ctx, iteration)
        following = iteration + 1
        task = self.message or "The task is not finished yet. Keep working on it."
        where = _where_to_promise(event).format(token=self.token)
        reason = (
            f"{_lead(event)}{task}\n\nIteration {following} of {self.max_iterations}. When "
            f"the task is completely done and checked, {where}. Do not write it before then."
        )
        return HookResult(
            decision="block",
            reason=reason,
            system_message=(
                f"completion_promise: iteration {following} of {self.max_iterations} "
                f"(to stop, the agent writes {self.token})"
            ),
        )


class _Check:
    """One required artifact glob."""

    __slots__ = ("glob", "pattern")

    def __init__(self, glob: str) -> None:
        self.glob = glob
        self.pattern = glob + "**" if glob.endswith("/") else glob


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def _json_path(parts: Iterable[Any]) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


class RequireArtifacts:
    """Block a stop until the required artifacts and ledger facts exist.

    ``paths``: globs relative to the event's ``cwd`` (absolute ones too; a
    trailing ``/`` means anything below); each must match at least one
    non-empty file. Matched ``.json`` files must parse, and files matched by a
    ``schema`` glob must validate against its JSON Schema (a mapping, or a path
    relative to the definition file's folder, else the ``cwd``); a broken one
    counts as missing, with the reason. ``schema`` globs are required artifacts
    too. ``tools``: tool globs that need a successful call (status ``ok``) in
    this session's ledger; without a ledger that check is a configuration error
    (the hook fails when it first runs, and the stop goes through per
    ``on_failure``).

    Claude Code refuses a subagent's Write of ``REPORT*.md``, ``SUMMARY*.md``,
    ``FINDINGS*.md`` and ``ANALYSIS*.md`` before any hook runs: ask a subagent for a
    name it may write (docs/builtins.md).

    Missing: ``block`` with "Retry required: REPORT.txt missing ...". Present:
    ``allow`` with "Report found: REPORT.txt (1.2 KB)" as reason and system
    message. After ``max_retries`` blocks in a row (per session and agent; at
    most 8, the Guard's cap) the stop is let through with a system message
    naming what is still missing.
    """

    hook_name = "require_artifacts"

    def __init__(
        self,
        paths: str | Iterable[str] | None = None,
        schema: Mapping[str, Any] | None = None,
        tools: str | Iterable[str] | None = None,
        max_retries: int = 3,
    ) -> None:
        self.paths = _strings(paths, "paths")
        self.tools = _strings(tools, "tools")
        if schema is not None and not isinstance(schema, Mapping):
            raise ValueError(
                f"schema must map artifact globs to a JSON Schema or a schema file, got {schema!r}"
            )
        self.schema: dict[str, Any] = dict(schema or {})
        if not (self.paths or self.schema or self.tools):
            raise ValueError("nothing to require: give paths, schema or tools")
        if (
            isinstance(max_retries, bool)
            or not isinstance(max_retries, int)
            or not 1 <= max_retries <= STOP_BLOCK_CAP
        ):
            raise ValueError(
                f"max_retries must be an integer from 1 to {STOP_BLOCK_CAP} (the Guard lets a "
                f"stop through after {STOP_BLOCK_CAP} consecutive blocks), got {max_retries!r}"
            )
        self.max_retries = max_retries
        try:
            self._tool_res = [compile_glob(t) for t in self.tools]
            self._schema_res = [compile_glob(g.rstrip("/"), path=True) for g in self.schema]
            for g in self.paths:
                compile_glob(g, path=True)
        except GuardrailsError as exc:
            raise ValueError(str(exc)) from None
        self._validators: dict[str, Any] = {}
        for glob, spec in self.schema.items():
            if not isinstance(glob, str) or not glob.strip():
                raise ValueError(f"schema: a key must be a non-empty glob, got {glob!r}")
            if isinstance(spec, Mapping):
                self._validators[glob] = _validator(dict(spec), f"schema[{glob!r}]")
            elif not isinstance(spec, str) or not spec.strip():
                raise ValueError(
                    f"schema[{glob!r}] must be a JSON Schema mapping or a path to one, got {spec!r}"
                )
        self._checks = [_Check(g) for g in dict.fromkeys([*self.paths, *self.schema])]
        self._count = _BlockCount(self)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"RequireArtifacts(paths={self.paths!r}, schema={list(self.schema)!r}, "
            f"tools={self.tools!r})"
        )

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        if event.event_name not in GATE_EVENTS:
            return None
        cwd = event.cwd or os.getcwd()
        found: list[str] = []
        missing: list[str] = []
        for check in self._checks:
            ok, text = self._check_files(check, cwd, ctx)
            (found if ok else missing).append(text)
        done: list[str] = []
        if self.tools:
            done, absent = self._check_tools(event, ctx)
            missing.extend(f"no successful {t} call in this session" for t in absent)
        with self._lock:
            if not missing:
                self._count.set(event, ctx, 0)
                parts = ["Report found: " + ", ".join(found)] if found else []
                if done:
                    parts.append(f"{', '.join(done)} succeeded")
                summary = "; ".join(parts)
                return HookResult(decision="allow", reason=summary, system_message=summary)
            blocked = self._count.so_far(event, ctx, self.max_retries)
            if blocked >= self.max_retries:
                self._count.set(event, ctx, 0)
                note = (
                    f"require_artifacts: letting the stop through after {blocked} "
                    f"retr{'ies' if blocked != 1 else 'y'}; still missing: " + "; ".join(missing)
                )
                return HookResult(decision="allow", reason=note, system_message=note)
            self._count.set(event, ctx, blocked + 1)
        where = f" (paths are relative to {cwd})" if self._checks else ""
        return HookResult.block(
            f"{_lead(event)}Retry required: "
            + "; ".join(missing)
            + f".\nCreate or fix what is missing{where}, then finish. "
            f"Retry {blocked + 1} of {self.max_retries}."
        )

    # --- files --------------------------------------------------------------------

    def _check_files(self, check: _Check, cwd: str, ctx: Any) -> tuple[bool, str]:
        from wcmatch import glob as wglob

        flags = wglob.GLOBSTAR | wglob.BRACE | wglob.FORCEUNIX
        good: list[tuple[str, int]] = []
        empty = 0
        problems: list[str] = []
        seen = 0
        for rel in wglob.iglob(check.pattern, flags=flags, root_dir=cwd):
            full = rel if os.path.isabs(rel) else os.path.join(cwd, rel)
            try:
                st = os.stat(full)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            seen += 1
            if seen > _MAX_FILES:
                break
            if st.st_size == 0:
                empty += 1
                continue
            problem = self._check_json(rel, full, st.st_size, cwd, ctx)
            if problem:
                problems.append(problem)
            else:
                good.append((rel, st.st_size))
        if problems:
            return False, "; ".join(problems)
        if good:
            if len(good) == 1 and good[0][0] == check.glob:
                return True, f"{check.glob} ({_size(good[0][1])})"
            total = sum(n for _, n in good)
            files = "file" if len(good) == 1 else "files"
            return True, f"{check.glob} ({len(good)} {files}, {_size(total)})"
        if empty:
            return False, f"{check.glob} is empty"
        return False, f"{check.glob} missing"

    def _check_json(self, rel: str, full: str, size: int, cwd: str, ctx: Any) -> str | None:
        schemas = [
            glob
            for glob, regex in zip(self.schema, self._schema_res, strict=True)
            if regex.fullmatch(rel) or regex.fullmatch(full)
        ]
        if not schemas and not rel.lower().endswith(".json"):
            return None
        if size > _MAX_JSON_BYTES:
            return f"{rel} is too large to check ({_size(size)})"
        try:
            with open(full, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, UnicodeDecodeError) as exc:
            return f"{rel} is unreadable ({exc})"
        except json.JSONDecodeError as exc:
            return f"{rel} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        for glob in schemas:
            validator = self._validator(glob, cwd, ctx)
            errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
            if errors:
                shown = "; ".join(
                    f"{_json_path(e.absolute_path)}: {e.message[:200]}" for e in errors[:3]
                )
                more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
                return f"{rel} does not match its schema: {shown}{more}"
        return None

    def _validator(self, glob: str, cwd: str, ctx: Any) -> Any:
        hit = self._validators.get(glob)
        if hit is not None:
            return hit
        spec = self.schema[glob]
        source = getattr(ctx.definition, "source", None)
        base = os.path.dirname(os.path.abspath(source)) if source else cwd
        path = os.path.join(base, os.path.expanduser(spec))
        try:
            with open(path, encoding="utf-8") as f:
                loaded = json.load(f)
        except (OSError, ValueError) as exc:
            raise HookFailure("error", f"schema file {path} for {glob!r}: {exc}") from None
        if not isinstance(loaded, dict):
            raise HookFailure("error", f"schema file {path} for {glob!r} is not a JSON object")
        try:
            validator = _validator(loaded, f"schema file {path}")
        except ValueError as exc:
            raise HookFailure("error", str(exc)) from None
        self._validators[glob] = validator
        return validator

    # --- ledger facts -------------------------------------------------------------

    def _check_tools(self, event: Any, ctx: Any) -> tuple[list[str], list[str]]:
        if ctx.ledger is None:
            raise HookFailure(
                "error",
                f"require_artifacts: tools={self.tools!r} needs a ledger to read; attach one "
                "(Guard(..., ledger=Ledger(path)) or `ledger:` in the definition)",
            )
        names = ctx.ledger.succeeded_tools(_sid(event, ctx))
        done: list[str] = []
        absent: list[str] = []
        for glob, regex in zip(self.tools, self._tool_res, strict=True):
            (done if any(regex.fullmatch(n) for n in names) else absent).append(glob)
        return done, absent


def _strings(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Iterable) or isinstance(value, Mapping):
        raise ValueError(f"{name} must be a list of globs, got {value!r}")
    items = list(value)
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise ValueError(f"{name} must be a list of non-empty globs, got {item!r}")
    return items


def _validator(schema: dict[str, Any], where: str) -> Any:
    """A Draft 2020-12 (or the schema's ``$schema``) validator that checks formats."""
    import importlib

    # imported by name: jsonschema ships no type stubs, and the hook only needs Any
    validators: Any = importlib.import_module("jsonschema.validators")
    exceptions: Any = importlib.import_module("jsonschema.exceptions")
    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        raise ValueError(f"{where} is not a valid JSON Schema: {exc.message}") from None
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


#: the ready instance: <promise>DONE</promise>, at most 5 iterations
completion_promise = CompletionPromise()
