"""``idempotency_guard``: a side-effecting call runs once per key, repeats are refused or replayed.

An agent that retries (a lost answer, a confused model, a resumed session, two
workers on one task) must not charge a card, send an e-mail or push twice. This
hook gives each side-effecting call a key and claims it in the ledger before
the call runs; an identical call later finds the claim:

* **completed** within the TTL: denied, the reason says when it ran and starts
  its result; with ``replay=True`` (default) the stored result rides along as
  ``annotations["replay"]``, so ``guard.run_tool`` returns it as the call's
  output (``ToolRun.replayed``) without running the tool. Claude Code and other
  hosts see the denial and its reason.
* **in progress**: denied, retry later (HTTP 409 in spirit).
* **same key, different arguments** (only for tools that declare key fields):
  denied as a conflict naming the differing fields (HTTP 422 in spirit).
* **failed**: the retry is claimed again and runs.
* **expired** (older than the TTL): treated as absent, claimed again.

Bind the one instance to the three tool events, so it learns how the call ended::

    hooks:
      PreToolUse:         [{matcher: "*", hooks: [idempotency_guard], priority: 1000}]
      PostToolUse:        [{matcher: "*", hooks: [idempotency_guard]}]
      PostToolUseFailure: [{matcher: "*", hooks: [idempotency_guard]}]

or configured, with the same parameters under the three events (a YAML anchor
helps): ``{use: idempotency_guard, with: {scope: agent, ttl: 1h}}``. A high
``priority`` number puts it after the other PreToolUse hooks, so it claims only
calls nobody denied. With a ledger, a claim whose call was denied by a later
hook, failed, was interrupted or whose process died (``tool_calls.status`` and
``pid``) is taken over by the next attempt, and one whose call finished ``ok``
counts as completed (its result read from ``tool_calls``), so binding it to
PreToolUse alone works too. Without a ledger such a claim stays in progress
until its TTL ends.

**The key** is the sha256 of the canonical JSON (see ``guardrails._canonical_json``)
of the scope, the tool name and its key fields: every input field, unless the
tool declares ``idempotency: {key: [field, ...]}`` (dotted paths reach nested
fields, ``customer.id``, ``items.0.sku``; a call missing a key field falls back
to all its fields). Shell tools leave out ``description``, ``timeout`` and
``run_in_background``: they do not change what runs. ``scope``: ``session``
(default; the main agent and its subagents share keys), ``agent`` (each agent of
a session apart: the ``agent_id``, or the main agent) or ``global`` (every
session of the ledger). ``ttl``: seconds or ``"90s"``, ``"15m"``, ``"24h"``,
``"7d"`` (default 24 h), ``None`` for ever. A tool may set its own ``scope`` and
``ttl`` in its ``idempotency`` mapping.

**Which calls are checked** (first rule that applies; reads never are):

1. ``annotations.readOnlyHint: true`` (MCP): not checked.
2. A shell tool (``Bash``, or ``primary_arg: command``): the command decides
   (``bash_side_effects``' classifier): ``git push`` is checked, ``ls`` is not.
3. The tool declares an ``idempotency`` mapping: checked.
4. ``annotations.idempotentHint: true``: not checked (repeating is harmless).
5. ``side_effects: true``: checked.
6. Any other MCP tool (``annotations`` given, even ``{}``): checked, per the
   MCP defaults (``readOnlyHint``/``idempotentHint`` false). ``destructiveHint:
   false`` does not exempt it: an additive call (create an issue) repeated is a
   duplicate.
7. Anything else: not checked.

**Where claims live**: the ledger's ``idempotency_keys`` table, claimed with one
``INSERT OR IGNORE`` in a ``BEGIN IMMEDIATE`` transaction, so processes sharing
the file agree on a single owner. Stored results are redacted like the ledger's
and capped (``max_result`` bytes; a longer one is cut and replayed cut). Without
a ledger, claims live in memory, per Guard: one process only. When the ledger
cannot be written, ``on_store_error`` decides: ``deny`` (default: a side effect
that may be a duplicate waits) or ``allow`` (run unchecked, annotated).
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from ..._canonical_json import canonical_hash, canonical_json
from ...errors import LedgerError
from ...ledger.common import iso_time
from ...ledger.store import KeyClaim
from ...results import HookResult
from .store import key_store

if TYPE_CHECKING:
    from ...definition.model import AgentDefinition, ToolSpec

__all__ = ["IdempotencyGuard", "idempotency_guard"]

Scope = Literal["session", "agent", "global"]

SCOPES: Final = ("session", "agent", "global")
DEFAULT_TTL: Final = 24 * 3600.0
DEFAULT_MAX_RESULT: Final = 64 * 1024
SUMMARY_CHARS: Final = 200
#: shell tool fields that describe or pace a command, not what it does
SHELL_COSMETIC: Final = frozenset({"description", "timeout", "run_in_background"})
_TOOL_KEYS: Final = frozenset({"key", "scope", "ttl"})
_UNITS: Final = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*")
_CUT_MARGIN = 4096
_STATE_KEY = "idempotency_guard.pending"
_PENDING_LIMIT = 10_000


def parse_ttl(value: Any, name: str = "ttl") -> float | None:
    """Seconds from a positive number or ``"90s"``/``"15m"``/``"24h"``/``"7d"``; None: for ever."""
    if value is None:
        return None
    if isinstance(value, str):
        m = _DURATION.fullmatch(value)
        if m is None:
            raise ValueError(
                f"{name} must be seconds or a duration like '90s', '15m', '24h', '7d', "
                f"got {value!r}"
            )
        seconds = float(m.group(1)) * _UNITS[m.group(2)]
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise TypeError(f"{name} must be a number of seconds, a duration or null, got {value!r}")
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"{name} must be positive and finite (null: for ever), got {value!r}")
    return seconds


def _check_scope(value: Any, name: str = "scope") -> Scope:
    if value not in SCOPES:
        raise ValueError(f"{name} must be one of {', '.join(SCOPES)}, got {value!r}")
    return value  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the definition says about one tool, settled once."""

    #: "never", "always" or "shell" (the command decides, else ``fallback``)
    check: Literal["never", "always", "shell"]
    fallback: bool
    key_paths: tuple[tuple[str, tuple[str, ...]], ...] | None
    scope: Scope
    ttl: float | None
    shell_field: str | None


class IdempotencyGuard:
    """Refuse (or replay) a repeated side-effecting call; see the module docstring.

    ``scope``: ``session``, ``agent`` or ``global``. ``ttl``: seconds or a duration
    string, ``None`` for ever. ``replay``: let ``run_tool`` return the stored result
    of a completed duplicate. ``on_store_error``: ``deny`` or ``allow`` when the
    ledger cannot be written. ``max_result``: UTF-8 bytes of a result kept for replay.
    """

    hook_name = "idempotency_guard"

    def __init__(
        self,
        *,
        scope: Scope = "session",
        ttl: float | str | None = DEFAULT_TTL,
        replay: bool = True,
        on_store_error: Literal["deny", "allow"] = "deny",
        max_result: int = DEFAULT_MAX_RESULT,
    ) -> None:
        self.scope: Scope = _check_scope(scope)
        self.ttl = parse_ttl(ttl)
        if not isinstance(replay, bool):
            raise TypeError(f"replay must be true or false, got {replay!r}")
        self.replay = replay
        if on_store_error not in ("deny", "allow"):
            raise ValueError(f"on_store_error must be 'deny' or 'allow', got {on_store_error!r}")
        self.on_store_error: Literal["deny", "allow"] = on_store_error
        if isinstance(max_result, bool) or not isinstance(max_result, int) or max_result < 256:
            raise ValueError(f"max_result must be an integer >= 256 (bytes), got {max_result!r}")
        self.max_result = max_result
        #: (tool, id(spec)) -> (spec kept alive so the id stays its own, plan)
        self._plans: dict[tuple[str, int], tuple[Any, _Plan]] = {}

    def __repr__(self) -> str:
        return f"IdempotencyGuard(scope={self.scope!r}, ttl={self.ttl!r})"

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        name = event.event_name
        if name == "PreToolUse":
            return self._pre(event, ctx)
        if name == "PostToolUse":
            self._finish(event, ctx, "completed", event.tool_response)
        elif name == "PostToolUseFailure":
            self._finish(event, ctx, "failed", event.error)
        return None

    # --- what is checked, and under which key -------------------------------------

    def _plan(self, tool: str, definition: AgentDefinition) -> _Plan:
        spec = definition.tools.get(tool)
        cache_key = (tool, id(spec))
        hit = self._plans.get(cache_key)
        if hit is not None and hit[0] is spec:
            return hit[1]
        plan = self._make_plan(tool, spec, definition)
        self._plans[cache_key] = (spec, plan)
        return plan

    def _make_plan(self, tool: str, spec: ToolSpec | None, definition: AgentDefinition) -> _Plan:
        hints = (spec.annotations if spec is not None else None) or {}
        config = spec.idempotency if spec is not None else None
        where = f"tools.{tool}.idempotency"
        key_paths = None
        scope, ttl = self.scope, self.ttl
        if config is not None:
            unknown = sorted(set(config) - _TOOL_KEYS)
            if unknown:
                raise ValueError(f"{where}: unknown key {unknown[0]!r} (expected key, scope, ttl)")
            if "key" in config:
                key_paths = _key_paths(config["key"], f"{where}.key")
            if "scope" in config:
                scope = _check_scope(config["scope"], f"{where}.scope")
            if "ttl" in config:
                ttl = parse_ttl(config["ttl"], f"{where}.ttl")
        arg = definition.arg_of(tool)
        shell_field = arg[0] if arg is not None and arg[0] == "command" else None
        # the precedence of the module docstring; "fallback" answers when the shell
        # classifier is unavailable or the call has no command string
        if hints.get("readOnlyHint") is True:
            check: Literal["never", "always", "shell"] = "never"
            fallback = False
        else:
            if config is not None:
                fallback = True
            elif hints.get("idempotentHint") is True:
                fallback = False
            elif spec is not None and spec.side_effects:
                fallback = True
            else:  # an MCP tool (annotations given, even empty) gets the MCP defaults
                fallback = spec is not None and spec.annotations is not None
            check = "shell" if shell_field else ("always" if fallback else "never")
        return _Plan(check, fallback, key_paths, scope, ttl, shell_field)

    def _checked(self, plan: _Plan, tool_input: dict[str, Any]) -> bool:
        if plan.check != "shell":
            return plan.check == "always"
        command = tool_input.get(plan.shell_field or "command")
        if not isinstance(command, str):
            return plan.fallback
        classify = _classifier()
        if classify is None:
            return plan.fallback
        return bool(classify(command).side_effecting)

    def _claim(self, plan: _Plan, event: Any, ctx: Any, now: float) -> KeyClaim:
        tool_input: dict[str, Any] = event.tool_input or {}
        payload_hash = canonical_hash(tool_input)  # first: its errors name paths in the input
        fields: Any
        declared = False
        if plan.key_paths is not None:
            picked = _pick(tool_input, plan.key_paths)
            declared = picked is not None
            fields = picked if picked is not None else tool_input
        elif plan.shell_field is not None:
            fields = {k: v for k, v in tool_input.items() if k not in SHELL_COSMETIC}
        else:
            fields = tool_input
        session_id = event.session_id or ctx.session_id
        material: dict[str, Any] = {"scope": plan.scope, "tool": event.tool_name, "key": fields}
        if plan.scope != "global":
            material["session"] = session_id
        if plan.scope == "agent":
            material["agent"] = event.agent_id or f"main:{ctx.definition.name}"
        return KeyClaim(
            key=canonical_hash(material),
            scope=plan.scope,
            session_id=session_id,
            agent_id=event.agent_id,
            tool_name=event.tool_name,
            payload_hash=payload_hash,
            tool_call_id=event.tool_use_id,
            declared=declared,
            now=now,
            expires=None if plan.ttl is None else now + plan.ttl,
            tool_input=tool_input,
        )

    # --- PreToolUse ------------------------------------------------------------------

    def _pre(self, event: Any, ctx: Any) -> HookResult | None:
        plan = self._plan(event.tool_name, ctx.definition)
        if not self._checked(plan, event.tool_input or {}):
            return None
        claim = self._claim(plan, event, ctx, ctx.clock())
        note: dict[str, Any] = {"key": claim.key, "scope": claim.scope}
        try:
            outcome = key_store(ctx).claim_key(claim)
        except LedgerError as exc:
            note["state"] = "unchecked"
            note["error"] = str(exc)
            if self.on_store_error == "allow":
                return HookResult(annotations={"idempotency": note})
            return HookResult(
                "deny",
                f"could not check whether this {event.tool_name} call already ran: the "
                f"idempotency store cannot be written ({exc}); a side-effecting call that may "
                "be a duplicate is not run",
                "Retry later.",
                annotations={"idempotency": note},
            )
        if outcome.verdict == "claimed":
            note["state"] = "claimed"
            pending = ctx.state.setdefault(_STATE_KEY, {})
            if len(pending) >= _PENDING_LIMIT:
                pending.clear()
            if claim.tool_call_id is not None:
                pending[claim.tool_call_id] = claim.key
            return HookResult(annotations={"idempotency": note})
        row = outcome.stored
        assert row is not None
        note["state"] = outcome.verdict
        note["tool_call_id"] = row.tool_call_id
        when = f"{_ago(claim.now - row.created)} (at {iso_time(row.created)})"
        tool = event.tool_name
        if outcome.verdict == "completed":
            annotations: dict[str, Any] = {"idempotency": note}
            if self.replay:
                annotations["replay"] = {"output": _loads(row.result)}
            return HookResult(
                "deny",
                f"duplicate call: {tool} already ran with the same {_what(claim)} "
                f"{when}{_scope_words(claim.scope)}, so it was not run again. "
                f"Its result: {_summary(row.result)}",
                "Use that result instead of repeating the call.",
                annotations=annotations,
            )
        if outcome.verdict == "conflict":
            fields = ", ".join(p for p, _ in plan.key_paths or ())
            return HookResult(
                "deny",
                f"idempotency conflict: this {tool} call has the same idempotency key "
                f"({fields}) as the call {when}, but different arguments: "
                f"{_diff(row.tool_input, claim.tool_input)}. It was not run",
                f"For a different operation use a new {fields}; to repeat the earlier one, "
                "send exactly its arguments.",
                annotations={"idempotency": note},
            )
        return HookResult(
            "deny",
            f"{tool} with the same {_what(claim)} is already running (started {when}); retry later",
            "Wait for the earlier call to finish and use its result instead of repeating it.",
            annotations={"idempotency": note},
        )

    # --- PostToolUse / PostToolUseFailure -------------------------------------------------

    def _finish(self, event: Any, ctx: Any, state: str, value: Any) -> None:
        call_id = event.tool_use_id
        pending = ctx.state.get(_STATE_KEY)
        key = pending.pop(call_id, None) if pending and call_id is not None else None
        exact = key is not None
        if key is None:  # another process claimed it (a command hook), or nothing was claimed
            plan = self._plan(event.tool_name, ctx.definition)
            if not self._checked(plan, event.tool_input or {}):
                return
            try:
                key = self._claim(plan, event, ctx, 0.0).key
            except (TypeError, ValueError):
                return
        store = key_store(ctx)
        text = _result_json(value, store.redactor, self.max_result)  # the ledger's patterns too
        end = store.complete_key if state == "completed" else store.fail_key
        # on a store error the claim stays in progress: the ledger's tool_calls row tells its end
        with contextlib.suppress(LedgerError):
            end(key, call_id, text, ctx.clock(), exact=exact)


_classify: Any = None


def _classifier() -> Any:
    """``guardrails.builtins.shell.classify.classify``, imported on first need (None if absent)."""
    global _classify
    if _classify is None:
        import importlib

        try:  # written alongside; optional until it lands
            _classify = importlib.import_module("guardrails.builtins.shell.classify").classify
        except (ImportError, AttributeError):
            return None
    return _classify


# --- key fields ----------------------------------------------------------------------------


def _key_paths(value: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if isinstance(value, str):
        value = [value]
    if (
        not isinstance(value, list | tuple)
        or not value
        or not all(isinstance(p, str) and p.strip(".") for p in value)
    ):
        raise ValueError(f"{where} must be a non-empty list of field names, got {value!r}")
    return tuple((p, tuple(p.split("."))) for p in value)


_MISSING: Final = object()


def _lookup(data: Any, path: str, parts: tuple[str, ...]) -> Any:
    if isinstance(data, dict) and path in data:  # a field whose name holds a dot
        return data[path]
    for part in parts:
        if isinstance(data, dict):
            if part not in data:
                return _MISSING
            data = data[part]
        elif isinstance(data, list | tuple) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return _MISSING
    return data


def _pick(
    tool_input: dict[str, Any], paths: tuple[tuple[str, tuple[str, ...]], ...]
) -> dict[str, Any] | None:
    """The declared key fields by path, or None when one is missing."""
    out = {}
    for path, parts in paths:
        value = _lookup(tool_input, path, parts)
        if value is _MISSING:
            return None
        out[path] = value
    return out


# --- results and wording ---------------------------------------------------------------------


def _result_json(value: Any, redactor: Any, cap: int) -> str:
    """JSON of ``value``, redacted, at most ``cap`` UTF-8 bytes (else a cut JSON string)."""
    try:
        raw = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        raw = json.dumps(repr(value), ensure_ascii=False)
    if len(raw) > cap + _CUT_MARGIN:  # cut first: redacting a megabyte costs
        return _cut(redactor.redact_text(raw[: cap + _CUT_MARGIN]), cap)
    try:
        text = json.dumps(
            redactor.redact(value),
            ensure_ascii=False,
            allow_nan=False,
            default=lambda o: redactor.redact_text(str(o)),
        )
    except (TypeError, ValueError, RecursionError):
        text = json.dumps(redactor.redact_text(repr(value)), ensure_ascii=False)
    if len(text) > cap // 4 and len(text.encode("utf-8", "surrogatepass")) > cap:
        return _cut(text, cap)
    return text


def _cut(text: str, cap: int) -> str:
    head = text.encode("utf-8", "surrogatepass")[:cap].decode("utf-8", "ignore")
    return json.dumps(head + "…[truncated]", ensure_ascii=False)


def _loads(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _summary(result: str | None) -> str:
    if result is None:
        return "(none stored)"
    value = _loads(result)
    text = value if isinstance(value, str) else result
    text = " ".join(text.split())
    if not text:
        return "(empty)"
    return text if len(text) <= SUMMARY_CHARS else text[:SUMMARY_CHARS] + "…"


def _diff(before: dict[str, Any] | None, after: dict[str, Any]) -> str:
    if not isinstance(before, dict):
        return "they differ from the earlier call's"
    parts = []
    for name in sorted(set(before) | set(after), key=str):
        old, new = before.get(name, _MISSING), after.get(name, _MISSING)
        if _same(old, new):
            continue
        parts.append(f"{name} was {_short(old)}, now {_short(new)}")
    return "; ".join(parts) if parts else "they differ from the earlier call's"


def _same(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return a is b
    try:
        return canonical_json(a) == canonical_json(b)
    except (TypeError, ValueError):
        return bool(a == b)


def _short(value: Any) -> str:
    if value is _MISSING:
        return "absent"
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:60] + "…"


def _what(c: KeyClaim) -> str:
    return "idempotency key" if c.declared else "arguments"


def _scope_words(scope: str) -> str:
    return {"session": " in this session", "agent": " in this agent", "global": ""}[scope]


def _ago(seconds: float) -> str:
    s = max(0, int(seconds))
    if s < 60:
        return "just now" if s < 1 else f"{s} second{'s' if s != 1 else ''} ago"
    m = s // 60
    if m < 120:
        return f"{m} minute{'s' if m != 1 else ''} ago"
    h = m // 60
    if h < 48:
        return f"{h} hours ago"
    return f"{h // 24} days ago"


idempotency_guard = IdempotencyGuard()
