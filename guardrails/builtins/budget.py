"""Per-session tool budgets (``tool_budget``) and secret masking of tool results
(``redact_secrets``).

``ToolBudget(limits={"Bash": 20, "mcp__github__*": 5, "*": 200})`` caps how many
calls of each tool glob a session may make, warning the model as the end nears;
``redact_secrets`` masks credentials in what a tool returned before the model
reads it, with the same patterns the ledger uses.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from ..definition.matchers import compile_glob, split_alternatives
from ..errors import GuardrailsError
from ..results import HookResult

if TYPE_CHECKING:
    from .._redaction import Redactor

__all__ = ["RedactSecrets", "ToolBudget", "redact_secrets", "tool_budget"]

_GLOB_CHARS: Final = frozenset("*?[{|")
#: in-flight calls remembered per session at most (a degraded ledger never records them)
_MAX_INFLIGHT: Final = 1024


class _Limit:
    __slots__ = ("glob", "label", "limit", "regexes", "warn_from")

    def __init__(self, glob: str, limit: int, warn_at: float | None) -> None:
        self.glob = glob
        self.limit = limit
        self.regexes = [compile_glob(alt.strip()) for alt in split_alternatives(glob)]
        if glob == "*":
            self.label = "tool calls"
        elif _GLOB_CHARS.isdisjoint(glob):
            self.label = f"{glob} calls"
        else:
            self.label = f"calls matching {glob}"
        #: the count (this call included) from which each allowed call carries a warning
        self.warn_from = None if warn_at is None else max(1, math.ceil(warn_at * limit))

    def matches(self, tool: str) -> bool:
        return any(r.fullmatch(tool) for r in self.regexes)


class ToolBudget:
    """At most ``limits[glob]`` calls per session of the tools each glob matches.

    A call counts against every limit whose glob matches its tool name (globs as
    in matchers: ``*``, ``?``, ``[..]``, ``{a,b}``, ``A|B``), and is denied when
    any of them is spent; the reason names that limit. Only calls that went
    ahead count: a call this hook or any other hook denied does not use budget.

    From ``warn_at`` (a fraction of the limit; ``None``: never) on, every
    allowed call tells the model how many are left ("3 of 20 Bash calls left
    in this session"), so the count stays right even when each call runs in
    a new process.

    Counting: with a ledger, the session's calls are counted from
    ``tool_calls`` (status not ``denied``), plus calls this process let through
    that the ledger has not recorded yet, so a restarted process or a Claude
    command hook (one process per call) keeps the count. Without a ledger, or
    while it cannot be read or written, the count is the calls this hook let
    through in this process (there a call another hook denied after this one
    ran still counts). Calls running at once in several processes can each see
    the last unit of budget: the limit is exact for one process, soft across
    processes.
    """

    hook_name = "tool_budget"

    def __init__(
        self, limits: Mapping[str, int] | None = None, warn_at: float | None = 0.8
    ) -> None:
        if limits is None:
            limits = {"*": 200}
        if not isinstance(limits, Mapping) or not limits:
            raise ValueError(
                "limits must be a non-empty mapping of tool glob to a call limit, "
                f"e.g. {{'Bash': 20, '*': 200}}; got {limits!r}"
            )
        if warn_at is not None and (
            isinstance(warn_at, bool)
            or not isinstance(warn_at, int | float)
            or not 0 < warn_at <= 1
        ):
            raise ValueError(f"warn_at must be a fraction in (0, 1] or None, got {warn_at!r}")
        self.limits: dict[str, int] = dict(limits)
        self.warn_at = warn_at
        self._limits: list[_Limit] = []
        for glob, limit in self.limits.items():
            if not isinstance(glob, str) or not glob.strip():
                raise ValueError(f"limits: a key must be a non-empty tool glob, got {glob!r}")
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
                raise ValueError(f"limits[{glob!r}] must be a non-negative integer, got {limit!r}")
            try:
                self._limits.append(_Limit(glob, limit, warn_at))
            except GuardrailsError as exc:  # a glob wcmatch refuses, unbalanced braces
                raise ValueError(f"limits: {exc}") from None
        self._by_tool: dict[str, tuple[int, ...]] = {}
        self._lock = threading.Lock()
        self._key = f"tool_budget@{id(self):x}"

    def __repr__(self) -> str:
        return f"ToolBudget(limits={self.limits!r}, warn_at={self.warn_at!r})"

    def _applicable(self, tool: str) -> tuple[int, ...]:
        hit = self._by_tool.get(tool)
        if hit is None:
            hit = tuple(i for i, lim in enumerate(self._limits) if lim.matches(tool))
            if len(self._by_tool) >= 4096:
                self._by_tool.clear()
            self._by_tool[tool] = hit
        return hit

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        if event.event_name != "PreToolUse":
            return None
        which = self._applicable(event.tool_name)
        if not which:
            return None
        with self._lock:
            state = ctx.state.get(self._key)
            if state is None:
                state = ctx.state[self._key] = {"counts": [0] * len(self._limits), "inflight": {}}
            used = self._used(event, ctx, state)
            for i in which:
                lim = self._limits[i]
                if used[i] >= lim.limit:
                    return self._deny(lim, used[i])
            for i in which:
                state["counts"][i] += 1
                used[i] += 1
            if ctx.ledger is not None and event.tool_use_id:
                inflight: dict[str, tuple[int, ...]] = state["inflight"]
                if len(inflight) >= _MAX_INFLIGHT:
                    inflight.pop(next(iter(inflight)))
                inflight[event.tool_use_id] = which
        return self._warn(which, used)

    def _used(self, event: Any, ctx: Any, state: dict[str, Any]) -> list[int]:
        """Calls so far per limit (not counting the one being decided)."""
        own: list[int] = state["counts"]
        reader = ctx.ledger
        if reader is None:
            return list(own)
        sid = event.session_id or ctx.session_id  # the id the ledger records the call under
        seen: dict[str, Any] | None = state.get("ledger")
        inflight: dict[str, tuple[int, ...]] = state["inflight"]
        try:
            # the session's totals once per process, then only the rows added since
            if seen is None and not inflight:
                totals = reader.session_tool_totals(sid)
                rows = []
                last, counted = 0, [0] * len(self._limits)
                for row in totals:
                    last = max(last, row["last_id"])
                    for i in self._applicable(row["tool_name"]):
                        counted[i] += row["n"]
            elif seen is None:  # calls allowed while the ledger was unreadable: match them
                rows = reader.session_calls(sid)
                last, counted = 0, [0] * len(self._limits)
            else:
                rows = reader.session_calls(sid, after_id=seen["last_id"])
                last, counted = seen["last_id"], list(seen["used"])
        except GuardrailsError:  # LedgerError: the file cannot be read
            return list(own)
        for row in rows:
            last = max(last, row["id"])
            inflight.pop(row["tool_call_id"], None)
            if row["status"] != "denied":
                for i in self._applicable(row["tool_name"]):
                    counted[i] += 1
        state["ledger"] = {"last_id": last, "used": counted}
        used = list(counted)
        for which in inflight.values():  # allowed here, not in the file yet
            for i in which:
                used[i] += 1
        writer = getattr(getattr(ctx, "guard", None), "ledger", None)
        if getattr(writer, "degraded", None):  # records go to the spool, not the file
            return [max(a, b) for a, b in zip(used, own, strict=True)]
        return used

    def _deny(self, lim: _Limit, used: int) -> HookResult:
        noun = lim.label
        reason = (
            f"Tool budget spent: this session has used {used} of its {lim.limit} {noun} "
            f"(limit {lim.glob}: {lim.limit}), so this call was not made."
        )
        hint = (
            f"Do not retry; further {noun} will be denied too. Continue with the tools and "
            "results you already have, or finish and report what remains undone."
        )
        return HookResult(
            decision="deny",
            reason=reason,
            hint=hint,
            annotations={"tool_budget": {lim.glob: {"used": used, "limit": lim.limit}}},
        )

    def _warn(self, which: Iterable[int], used: list[int]) -> HookResult | None:
        parts: list[str] = []
        facts: dict[str, Any] = {}
        for i in which:
            lim = self._limits[i]
            if lim.warn_from is None or used[i] < lim.warn_from:
                continue
            left = lim.limit - used[i]
            parts.append(f"{left} of {lim.limit} {lim.label} left in this session")
            facts[lim.glob] = {"used": used[i], "limit": lim.limit}
        if not parts:
            return None
        text = "Tool budget: " + "; ".join(parts) + "."
        return HookResult(additional_context=text, annotations={"tool_budget": facts})


class RedactSecrets:
    """Mask secrets in a tool's result before the model reads it.

    Uses the ledger's patterns (:class:`guardrails._redaction.Redactor`: API keys,
    tokens, private keys, ``NAME=secret``, URL passwords, values under
    secret-named keys) plus ``patterns`` (extra regexes; a group named
    ``secret`` masks only that part). When the result holds a secret, the hook
    returns a redacted copy of the same shape (a string stays a string, a dict a
    dict, nested values included); a clean result is left alone (``None``).
    Objects other than strings, dicts, lists, tuples and sets pass through
    unscanned. ``PostToolUseFailure`` errors cannot be rewritten by hooks; the
    ledger still stores them redacted.
    """

    hook_name = "redact_secrets"

    def __init__(
        self,
        patterns: Iterable[str | re.Pattern[str]] | None = None,
        mask: str = "[REDACTED:{kind}]",
    ) -> None:
        if isinstance(patterns, str | bytes) or (
            patterns is not None and not isinstance(patterns, Iterable)
        ):
            raise ValueError(f"patterns must be a list of regexes, got {patterns!r}")
        self.patterns = list(patterns or ())
        for p in self.patterns:
            if isinstance(p, re.Pattern):
                continue
            if not isinstance(p, str):
                raise ValueError(f"patterns: {p!r} is not a regex string")
            try:
                re.compile(p)
            except re.error as exc:
                raise ValueError(f"patterns: invalid regex {p!r}: {exc}") from None
        if not isinstance(mask, str):
            raise ValueError(f"mask must be a string such as '[REDACTED:{{kind}}]', got {mask!r}")
        self.mask = mask
        from .._redaction import DEFAULT_MASK, DEFAULT_REDACTOR, Redactor

        if not self.patterns and mask == DEFAULT_MASK:
            self._redactor: Redactor = DEFAULT_REDACTOR
        else:
            try:
                self._redactor = Redactor(self.patterns, mask=mask)
            except GuardrailsError as exc:  # DefinitionError: a bad mask or pattern
                raise ValueError(str(exc)) from None

    def __repr__(self) -> str:
        return f"RedactSecrets(patterns={self.patterns!r})"

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        if event.event_name != "PostToolUse":
            return None
        output = event.tool_response
        if isinstance(output, str):
            redacted: Any = self._redactor.redact_text(output)
            changed = redacted != output
        elif isinstance(output, dict | list | tuple | set | frozenset | Mapping):
            redacted = self._redactor.redact(output)
            changed = redacted != output
        else:
            return None
        if not changed:
            return None
        return HookResult.modify(output=redacted)


#: the ready instance: the ledger's patterns, the default mask
redact_secrets = RedactSecrets()

#: the ready instance: 200 calls of any tool per session, warning from 160
tool_budget = ToolBudget()
