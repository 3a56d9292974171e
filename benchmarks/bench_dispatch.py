"""Dispatch overhead of ``Guard.emit_sync`` against a hand-written floor and pluggy.

Every case binds ``bindings`` no-op hooks to ``PreToolUse``, of which
``matching`` are bound with ``matcher="Bash"`` (one ``HookMatcher`` holding
all of them) and the rest with ``matcher="Tool<i>"`` (one matcher each), so
the matcher index must filter them out. The event is a ``Bash`` call.

Columns (ns per call, median of repeats, see ``_timing``):

* ``floor``: the least work equivalent to what the Guard does: a dict
  lookup from tool name to the list of the same no-op functions, then direct
  calls ``fn(event, ctx)`` checking each result for a deny.
* ``hookrails``: ``guard.emit_sync(event)`` with one pre-built event reused.
* ``fresh-event``: the same, building a new ``PreToolUse(...)`` for every call (the
  construction alone is printed below the table).
* ``pluggy``: ``pm.hook.pre_tool_use(event=..., ctx=...)`` with as many no-op
  hookimpls as there are matching hooks (pluggy has no matchers: what runs is
  what is registered).
"""

from __future__ import annotations

import asyncio
import statistics
import time
import types
from collections.abc import Callable
from typing import Any

from _timing import compare, fmt_ratio, ratio, rounds, table

from guardrails import AgentDefinition, Guard, HookMatcher, PreToolUse

#: (bindings, matching) cases
CASES: list[tuple[int, int]] = [
    (1, 0),
    (1, 1),
    (10, 0),
    (10, 1),
    (10, 10),
    (100, 0),
    (100, 1),
    (100, 10),
    (100, 100),
]
TARGET_MATCHING = 10
TARGET_RATIO = 3.0
PLUGGY_TARGET = 0.67  # 1.5x faster than pluggy
TOOL_INPUT = {"command": "ls -la"}


def _noops(n: int) -> list[Callable[[Any, Any], None]]:
    """``n`` distinct no-op hook functions."""

    def make() -> Callable[[Any, Any], None]:
        def noop(event: Any, ctx: Any) -> None:
            return None

        return noop

    return [make() for _ in range(n)]


async def _async_noop(event: Any, ctx: Any) -> None:
    return None


def _event() -> PreToolUse:
    return PreToolUse(tool_name="Bash", tool_input=dict(TOOL_INPUT), session_id="s", cwd="/tmp")


def _guard(bindings: int, hooks: list[Any]) -> Guard:
    matchers = [HookMatcher(matcher="Bash", hooks=hooks)] if hooks else []
    matchers += [
        HookMatcher(matcher=f"Tool{i}", hooks=_noops(1)) for i in range(bindings - len(hooks))
    ]
    return Guard(AgentDefinition(name="bench", hooks={"PreToolUse": matchers}))


def _floor(hooks: list[Any]) -> Callable[[Any], Any]:
    table_ = {"Bash": list(hooks)}
    for i in range(5):  # a few other tools, so the dict is not trivially small
        table_[f"Tool{i}"] = []
    ctx = types.SimpleNamespace(session_id="s", state={})

    def floor(event: Any) -> Any:
        for fn in table_.get(event.tool_name, ()):
            r = fn(event, ctx)
            if r is not None and r.decision == "deny":
                return r
        return None

    return floor


def _pluggy(hooks: list[Any]) -> Callable[[Any], Any] | None:
    try:
        import pluggy
    except ImportError:
        return None
    spec = pluggy.HookspecMarker("bench")
    impl = pluggy.HookimplMarker("bench")

    class Spec:
        @spec
        def pre_tool_use(self, event: Any, ctx: Any) -> Any: ...

    pm = pluggy.PluginManager("bench")
    pm.add_hookspecs(Spec)
    for i, fn in enumerate(hooks):
        pm.register(types.SimpleNamespace(pre_tool_use=impl(fn)), name=f"plugin{i}")
    hook = pm.hook.pre_tool_use
    ctx = types.SimpleNamespace(session_id="s", state={})

    def call(event: Any) -> Any:
        return hook(event=event, ctx=ctx)

    return call


def _fmt(ns: float | None) -> str:
    return "n/a" if ns is None else f"{ns:,.0f}"


def dispatch() -> None:
    """Sync dispatch overhead: floor vs hookrails vs pluggy."""
    print(__doc__.split("\n\n", 1)[1].rstrip() if __doc__ else "")
    print()
    rows = []
    verdicts = []
    for bindings, matching in CASES:
        hooks = _noops(matching)
        guard = _guard(bindings, hooks)
        ev = _event()
        check = guard.emit_sync(ev)
        assert check.decision == "allow" and len(check.runs) == matching, check
        floor = _floor(hooks)
        plug = _pluggy(hooks)
        emit = guard.emit_sync

        def fresh(_: Any, emit: Callable[[Any], Any] = emit) -> Any:
            return emit(
                PreToolUse(
                    tool_name="Bash", tool_input={"command": "ls -la"}, session_id="s", cwd="/tmp"
                )
            )

        fns: list[Callable[[Any], Any]] = [floor, emit, fresh]
        if plug is not None:
            fns.append(plug)
        res = rounds(fns, ev)
        f_ns, h_ns, fresh_ns = (statistics.median(r) for r in res[:3])
        p_ns = statistics.median(res[3]) if plug is not None else None
        vs_floor = ratio(res[1], res[0])
        vs_plug = ratio(res[1], res[3]) if plug is not None else None
        rows.append(
            [
                f"{bindings:>3} bound / {matching:>3} match",
                _fmt(f_ns),
                _fmt(h_ns),
                _fmt(fresh_ns),
                _fmt(p_ns),
                fmt_ratio(vs_floor),
                "n/a" if vs_plug is None else fmt_ratio(vs_plug),
            ]
        )
        if matching == TARGET_MATCHING:
            ok_floor = vs_floor[0] <= TARGET_RATIO
            ok_plug = vs_plug is not None and vs_plug[0] <= PLUGGY_TARGET
            verdicts.append(
                f"  {bindings:>3} bound / {matching} match: "
                f"<= {TARGET_RATIO:g}x floor: {'MET' if ok_floor else 'NOT MET'} "
                f"({fmt_ratio(vs_floor)}); <= {PLUGGY_TARGET:g}x pluggy: "
                f"{'MET' if ok_plug else 'NOT MET'}"
                + (f" ({fmt_ratio(vs_plug)})" if vs_plug else "")
            )
    headers = [
        "case (PreToolUse)",
        "floor ns",
        "hookrails ns",
        "fresh-event ns",
        "pluggy ns",
        "hookrails/floor",
        "hookrails/pluggy",
    ]
    print(table(headers, rows))
    (build_ns,) = compare([lambda _: _event()], None)
    print(f"\n(building one PreToolUse(...) alone: {build_ns:,.0f} ns; included in 'fresh-event')")
    print(
        f"\nTarget: {TARGET_MATCHING} matching no-op hooks within {TARGET_RATIO:g}x the floor "
        f"and within {PLUGGY_TARGET:g}x pluggy (median of the rounds' ratios, min-max; "
        "reported, not asserted):"
    )
    print("\n".join(verdicts))


def async_dispatch() -> None:
    """Async path ``await guard.emit(event)``, for information."""
    print(
        "`await guard.emit(event)` runs a stretch of sync hooks in one worker thread, so their\n"
        "timeouts are enforceable (one thread handoff, ~0.1 ms), and wraps each async hook in\n"
        "asyncio.wait_for: expect it to be far slower than emit_sync. Median of 5 repeats of a\n"
        "loop of awaits in one event loop."
    )
    print()
    n = TARGET_MATCHING
    sync_guard = _guard(n, _noops(n))
    async_guard = _guard(n, [_async_noop] * n)
    ev = _event()

    async def run(guard: Guard, loops: int) -> list[float]:
        await guard.emit(ev)  # warm up (thread pool, session)
        out = []
        for _ in range(5):
            t0 = time.perf_counter_ns()
            for _ in range(loops):
                await guard.emit(ev)
            out.append((time.perf_counter_ns() - t0) / loops)
        return out

    threads = statistics.median(asyncio.run(run(sync_guard, 200)))
    coros = statistics.median(asyncio.run(run(async_guard, 500)))
    (sync_ns,) = compare([sync_guard.emit_sync], ev)
    rows = [
        [f"emit_sync, {n} sync hooks", f"{sync_ns:,.0f}", "1.0x"],
        [f"await emit, {n} sync hooks (threads)", f"{threads:,.0f}", f"{threads / sync_ns:.0f}x"],
        [f"await emit, {n} async hooks", f"{coros:,.0f}", f"{coros / sync_ns:.0f}x"],
    ]
    print(table(["path", "ns/call", "vs emit_sync"], rows))


#: argument rules on one tool: ``Bash(cmd<i> *)``, one matcher (and no-op hook) each
RULE_COUNTS = [10, 100, 1000]


def _rules_guard(n: int) -> Guard:
    matchers = [HookMatcher(matcher=f"Bash(cmd{i} *)", hooks=_noops(1)) for i in range(n)]
    return Guard(AgentDefinition(name="bench", hooks={"PreToolUse": matchers}))


def rules_scaling() -> None:
    """Argument rules on one tool: 10 / 100 / 1,000 ``Bash(cmd<i> *)`` matchers."""
    print(
        "Each of n matchers is `Bash(cmd<i> *)` with one no-op hook; one Bash call whose\n"
        "command one rule matches (`cmd5 --x`), one that none matches (`ls -la`).\n"
        "ns per call (median of interleaved rounds); ratio to n=10 per round, min-max."
    )
    print()
    hit = PreToolUse(tool_name="Bash", tool_input={"command": "cmd5 --x"}, session_id="s")
    miss = PreToolUse(tool_name="Bash", tool_input={"command": "ls -la"}, session_id="s")
    rows = []
    for label, ev in (("one rule matches", hit), ("no rule matches", miss)):
        emits = [_rules_guard(n).emit_sync for n in RULE_COUNTS]
        assert len(emits[-1](ev).runs) == (1 if ev is hit else 0)
        res = rounds(emits, ev)
        for n, r in zip(RULE_COUNTS, res, strict=True):
            rows.append(
                [f"{label}, n={n}", f"{statistics.median(r):,.0f}", fmt_ratio(ratio(r, res[0]))]
            )
    print(table(["case", "ns/call", "vs n=10"], rows))
