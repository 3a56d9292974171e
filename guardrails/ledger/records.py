"""One event's decision as the ledger's rows: named operations, redacted and capped.

:class:`EventRows` turns a :class:`~guardrails.results.Decision` into a list of
``(operation, parameters)`` pairs (``session``, ``session_end``, ``pre``, ``post``,
``event``, ``hook_runs``: an event's chain of hook runs as one JSON array; ``hook_run``,
one run, is what spools written before schema 7 hold). They are plain JSON-able values,
so the spool stores them as they are and a store runs them with its own statements
(``sqlite_write.SQL``). Tool inputs, outputs, payloads, reasons and error messages are
redacted here, before anything is written anywhere, and JSON values over their cap
become a :func:`truncation_marker` (``max_arguments``, ``max_output``). Strings keep any
lone surrogate; a store that cannot bind one escapes it (:func:`escape_ops`).
"""

from __future__ import annotations

import json
import re

from .._canonical_json import _sha256_hex, input_hash, json_encoder
from .._frozen import FrozenDict, FrozenList
from .._redaction import MAX_DEPTH
from ..results import UNSET
from .common import escape_surrogates, iso_time

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from .._redaction import Redactor
    from ..results import Decision

    #: one statement to run: its name and positional parameters
    Op = tuple[str, list[Any]]

__all__ = ["EVENT_ID", "EventRows", "escape_ops", "from_hook_run", "truncation_marker"]

#: placeholder in hook_runs params for the id of the events row written just before
#: (a string, so a spooled record keeps its meaning)
EVENT_ID = "@event_id"
#: ``hook_run_sets.flags`` (sql/migrations/0007): what an event's runs hold, so the
#: indexes take only the sets lookups need
_REFUSED, _FAILED, _INJECTED = 1, 2, 4
_FLAGS = {
    "deny": _REFUSED, "block": _REFUSED, "ask": _REFUSED, "halt": _REFUSED,
    "error": _FAILED, "timeout": _FAILED, "invalid": _FAILED, "refused": _FAILED,
    "inject": _INJECTED,
}  # fmt: skip
_SESSION_REFRESH = 30.0  # seconds between refreshes of sessions.last_seen_at
_SESSION_EVENTS = frozenset({"SessionStart", "SessionEnd", "UserPromptSubmit"})
_CACHE_LIMIT = 10_000
#: characters beyond the cap that are still redacted, so a secret cut by the cap is caught
_CUT_MARGIN = 4096
#: UTF-8 bytes one character of a str can take in JSON text, at most (``\u0000``)
_MAX_CHAR_BYTES = 6


def truncation_marker(size: int, sha256: str, head: str) -> dict[str, Any]:
    """What a JSON column holds instead of a value over its cap (docs/ledger.md): still
    JSON, so ``json_extract(tool_call_arguments, '$._truncated')`` finds them. ``size``
    and ``sha256`` are of the whole JSON text as the value was (UTF-8, before
    redaction), ``head`` its redacted beginning, cut to fit the cap."""
    return {"_truncated": True, "size": size, "sha256": sha256, "head": head}


def _bound(value: Any, budget: int, depth: int) -> int:
    """``budget`` less an upper bound of the UTF-8 bytes of ``value``'s JSON text (as
    ``json.dumps`` writes it), stopping once it is negative: a walk of the containers, no
    serializing (a guarded call's ``{"command": "ls"}`` costs a fraction of a microsecond).
    Negative too for anything but plain JSON values (and frozen event values) nested at
    most ``MAX_DEPTH`` deep: what the redactor may need to walk."""
    t = type(value)
    if t is str:
        return budget - len(value) * _MAX_CHAR_BYTES - 2
    if t is dict or t is FrozenDict:
        if depth >= MAX_DEPTH:
            return -1
        budget -= 2  # {}
        for k, v in value.items():
            # "key": value, -- a key JSON cannot hold is measured by _oversized
            if type(k) is not str:
                return -1
            budget = _bound(v, budget - len(k) * _MAX_CHAR_BYTES - 6, depth + 1)
            if budget < 0:
                break
        return budget
    if t is list or t is tuple or t is FrozenList:
        if depth >= MAX_DEPTH:
            return -1
        budget -= 2  # []
        for v in value:
            budget = _bound(v, budget - 2, depth + 1)  # value,
            if budget < 0:
                break
        return budget
    if value is None or t is bool or t is float:
        return budget - 24  # -1.7976931348623157e+308
    if t is int and -(2**63) < value < 2**63:
        return budget - 20
    return -1  # anything else (big ints, bytes, objects, subclasses): measure it


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _head(text: str, budget: int) -> str:
    """The longest beginning of ``text`` that takes at most ``budget`` bytes once it is a
    JSON string (UTF-8, ``"`` and ``\\`` escaped), cut between characters."""
    data = text.encode("utf-8", "surrogatepass")[:budget]
    try:
        head = data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:  # a character cut in two: drop its first bytes
        head = data[: exc.start].decode("utf-8", "surrogatepass")
    while True:
        over = _utf8_size(head) + head.count('"') + head.count("\\") - budget
        if over <= 0:
            return head
        head = head[: len(head) - over]  # each character dropped is a byte or more


def escape_ops(ops: list[Op]) -> list[Op]:
    """``ops`` with lone surrogates in their strings escaped (:func:`.common.escape_surrogates`):
    what SQLite is given when it refused them (``UnicodeEncodeError``), and what an import
    of the spool gives it. JSON columns stay the same JSON, so nothing is lost."""
    return [
        (name, [escape_surrogates(p) if type(p) is str else p for p in params])
        for name, params in ops
    ]


def from_hook_run(params: list[Any]) -> list[Any]:
    """A ``hook_run`` operation's parameters (one run, as spools written before schema 7
    hold them) as a ``hook_runs`` operation's: a set of one run."""
    sid, event, call_id, event_ref, hook, matcher, priority, outcome, ms, error, chars, at = params
    flags = _FLAGS.get(outcome, 0) | (_INJECTED if chars else 0)
    run = [hook, matcher, priority, outcome, ms, error, chars]
    return [sid, event, call_id, event_ref, at, json.dumps([run], ensure_ascii=False), flags]


def _error_parts(error: str) -> tuple[str | None, str]:
    m = re.match(
        r"([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Timeout\w*)): (.*)", error, re.S
    )
    if m:
        return m.group(1), m.group(2)
    return None, error


class EventRows:
    """Makes each event's rows; remembers what saves work on later events of a session
    (when its row was refreshed, a PreToolUse's arguments for its PostToolUse, redacted
    hook names). ``max_output``: UTF-8 bytes of a tool result or payload kept as JSON;
    ``max_arguments``: the same for tool arguments and annotations."""

    def __init__(self, redactor: Redactor, max_output: int, max_arguments: int) -> None:
        self.redactor = redactor
        self.max_output = max_output
        self.max_arguments = max_arguments
        #: session id -> when its row was last written (the upsert is paid once a while)
        self._sessions_seen: dict[str, float] = {}
        #: (session, tool call) -> (final arguments JSON, hash) from PreToolUse, for the post
        self._pending_args: dict[tuple[str, str | None], tuple[str, str]] = {}
        self._names: dict[str, str] = {}
        # json.dumps(value, ensure_ascii=False, allow_nan=False, default=...), without
        # building an encoder per value (a microsecond each, a few per event);
        # allow_nan=False: the column must stay valid JSON for json_extract()
        self._encode = json_encoder(default=self._text_of)

    def _text_of(self, value: Any) -> str:
        """What JSON cannot hold (bytes, objects) is stored as its redacted ``str``."""
        return self.redactor.redact_text(str(value))

    def _json(self, value: Any, cap: int) -> tuple[str, bool, int]:
        """``(JSON text, truncated, size)`` of ``value``, redacted. A value whose JSON
        text is over ``cap`` UTF-8 bytes becomes a :func:`truncation marker
        <truncation_marker>`; ``size`` is the bytes of the whole text either way."""
        if _bound(value, cap, 0) < 0:  # it may be over the cap: measure it before redacting
            big = self._oversized(value, cap)
            if big is not None:
                return big
        else:  # plain JSON values, not too deep: encoded as they are unless they may hold a
            # secret (no walk of the value for the usual tool input or output)
            try:
                text = self._encode(value)
            except (TypeError, ValueError, RecursionError):
                text = ""
            if text and self.redactor.leaves(text):
                size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
                return text, False, size
        try:
            text = self._encode(self.redactor.redact(value))
        except (TypeError, ValueError, RecursionError):  # NaN, keys JSON refuses, deep nesting
            try:
                shown = repr(value)
            except RecursionError:
                shown = f"<{type(value).__name__} nested too deeply>"
            if len(shown) > cap:
                return self._marker(json.dumps(shown, ensure_ascii=False), cap)
            text = json.dumps(self.redactor.redact_text(shown), ensure_ascii=False)
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        return text, False, size

    def _oversized(self, value: Any, cap: int) -> tuple[str, bool, int] | None:
        """The marker of a value whose JSON text is over ``cap`` bytes (None: it is not).
        Only the marker's head is redacted, so a 50 MB input costs a cap's worth of
        redaction, not 50 MB's."""
        try:
            raw = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError):
            return None
        if _utf8_size(raw) <= cap:
            return None
        return self._marker(raw, cap)

    def _marker(self, raw: str, cap: int) -> tuple[str, bool, int]:
        data = raw.encode("utf-8", "surrogatepass")
        head = _head(self.redactor.redact_text(raw[: cap + _CUT_MARGIN]), cap)
        marker = truncation_marker(len(data), _sha256_hex(data), head)
        return json.dumps(marker, ensure_ascii=False), True, len(data)

    def forget_sessions(self) -> None:
        """Write every session's row again on its next event (into a file opened anew)."""
        self._sessions_seen.clear()

    def _name(self, hook: str) -> str:
        """A hook's name, redacted once (an http hook's URL may carry a token)."""
        name = self._names.get(hook)
        if name is None:
            name = self._names[hook] = escape_surrogates(self.redactor.redact_text(hook))
        return name

    def _text(self, value: str | None) -> str | None:
        return self.redactor.redact_text(value) if value else value

    def ops(
        self,
        decision: Decision,
        now: float,
        *,
        agent: str,
        tenant: str | None,
        owner_pid: int | None = None,
        session_row: bool | None = None,
    ) -> list[Op]:
        """The rows of one event, its hook runs and its decision, in the order they are
        written (in one transaction). ``session_row``: whether to write the session's row
        (``None``: when it is due); the rows of an event made again after its decision
        changed keep the first making's choice."""
        ev = decision.event
        name = ev.event_name
        at = iso_time(now)
        sid = ev.session_id
        reason = self._text(decision.reason)
        ops: list[Op] = []
        seen = self._sessions_seen.get(sid)
        if session_row is None:
            session_row = seen is None or now - seen >= _SESSION_REFRESH or name in _SESSION_EVENTS
        if session_row:
            ops.append(("session", [sid, agent, tenant, ev.cwd, at, at]))
            if len(self._sessions_seen) >= _CACHE_LIMIT:
                self._sessions_seen.clear()
            self._sessions_seen[sid] = now
        call_id = None
        event_ref: Any = None
        if name == "PreToolUse":
            call_id = ev.tool_use_id
            cap = self.max_arguments
            args, _, _ = self._json(ev.tool_input, cap)
            upd = decision.updated_input
            final = args if upd is None else self._json(upd, cap)[0]
            denied = decision.decision == "deny"
            digest = input_hash(ev.tool_input)
            facts = decision.annotations
            notes = None if facts is None else self._json(facts, cap)[0]
            if not denied:
                if len(self._pending_args) >= _CACHE_LIMIT:
                    self._pending_args.clear()
                self._pending_args[(sid, call_id)] = (final, digest)
            elif self._pending_args:  # made again after a halt denied it: no post will come
                self._pending_args.pop((sid, call_id), None)
            ops.append(
                (
                    "pre",
                    [
                        sid, agent, ev.agent_id, ev.agent_type, call_id, ev.tool_name, args,
                        final, digest, decision.decision, reason,
                        "denied" if denied else "pending", at, at if denied else None,
                        0.0 if denied else None, owner_pid, notes,
                    ],
                )
            )  # fmt: skip
        elif name in ("PostToolUse", "PostToolUseFailure"):
            call_id = ev.tool_use_id
            cached = self._pending_args.pop((sid, call_id), None)
            if cached is not None and ev.tool_input is not None:
                args, digest = cached
            else:  # no PreToolUse here (another process recorded it, or none ran)
                args, _, _ = self._json(ev.tool_input, self.max_arguments)
                digest = input_hash(ev.tool_input)
            result: str | None
            size: int | None
            if name == "PostToolUse":
                output = decision.updated_output
                if output is UNSET:
                    output = ev.tool_response
                result, truncated, size = self._json(output, self.max_output)
                status, etype, emsg = "ok", None, None
            else:
                result, truncated, size = None, False, None
                status = "interrupted" if ev.is_interrupt else "error"
                etype, emsg = _error_parts(ev.error)
                emsg = self._text(emsg)
            ops.append(
                (
                    "post",
                    [
                        sid, agent, ev.agent_id, ev.agent_type, call_id, ev.tool_name, args, args,
                        digest, status, result, int(truncated), size, etype,
                        emsg, at, at, ev.duration_ms,
                    ],
                )
            )  # fmt: skip
        else:
            payload, _, _ = self._json(ev.to_claude(), self.max_output)
            if name == "StopFailure" and reason is None:  # the API error, beside the event
                details = getattr(ev, "error_details", None)
                reason = self._text(f"{ev.error}: {details}" if details else ev.error)
            # a permission event's deny (PermissionRequest, ...) is the event's block
            refused = decision.blocked or decision.decision == "deny"
            verdict = "halt" if decision.halted else "block" if refused else "allow"
            injected = sum(len(i.text) for i in decision.injections)
            ops.append(
                (
                    "event",
                    [sid, name, ev.agent_id, ev.agent_type, payload, verdict, reason, injected,
                     at],
                )
            )  # fmt: skip
            event_ref = EVENT_ID
            if name == "SessionEnd":
                ops.append(("session_end", [at, getattr(ev, "reason", None), sid]))
        runs = decision.runs
        if runs:
            flags = 0
            rows = []
            for r in runs:
                outcome = r.outcome
                flags |= _FLAGS.get(outcome, 0)
                if r.injected_chars:
                    flags |= _INJECTED
                # text inside the JSON keeps a lone surrogate as the text columns do: as
                # its written-out escape, so ->> reads back text UTF-8 can hold
                m = r.matcher
                rows.append(
                    [self._name(r.hook), m if m is None or m.isascii() else escape_surrogates(m),
                     r.priority, outcome, r.duration_ms,
                     escape_surrogates(self.redactor.redact_text(r.error)) if r.error else None,
                     r.injected_chars]
                )  # fmt: skip
            ops.append(
                ("hook_runs", [sid, name, call_id, event_ref, at, self._encode(rows), flags])
            )
        return ops
