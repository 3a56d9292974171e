"""Cost of the SQLite ledger on a guarded call, against a hand-written sqlite3 floor.

Every guarded call is ``guard.sync.run_tool("Bash", {"command": "ls"}, tool)``
with 2 no-op ``PreToolUse`` hooks and 1 no-op ``PostToolUse`` hook bound to
``Bash``; ``tool`` returns a short constant string. Each ledger (and each
floor) writes to its own file in a temporary directory.

Columns of ``ledger_call`` (microseconds per call; median of repeats of a
loop calibrated to ~150 ms, interleaved round-robin, gc off while timing):

* ``no ledger``: the same guarded call, ``Guard(..., ledger=False)``: dispatch
  only, for context.
* ``floor``: the least work that leaves the same trace: a raw stdlib
  ``sqlite3`` connection (autocommit mode) on its own file, with the same
  pragmas as the ledger (WAL, ``synchronous=NORMAL`` or ``FULL``,
  ``busy_timeout``) and the real schema (created by opening a ``Ledger`` on
  the file, then closed), doing one ``INSERT`` of a ``pending`` row into
  ``tool_calls`` in its own ``BEGIN IMMEDIATE`` transaction, calling the same
  tool, then one ``UPDATE`` to ``ok`` in its own transaction. Values that
  depend only on the input (argument JSON, hash, timestamps) are computed
  once; the result JSON and the call id are computed per call, the id shaped
  like the ids ``run_tool`` generates (``toolu_`` + 24 random hex digits: where
  rows land in the ``tool_call_id`` indexes matters).
* ``hookrails``: the guarded call with ``ledger=Ledger(path)`` (``durable=True``
  for the FULL rows).
* ``floor, ledger's statements``: the floor issuing exactly the statements the
  ledger issues per call (the call's INSERT and its UPDATE by row id, each
  event's hook runs as one row), with precomputed parameters: the SQL share of the
  ledger's cost, the rest being Python work.
* ``inline``: what the ledger promises, written inline on a raw connection
  (``_inline.py``: call id, timed hooks, JSON with the redactor's test, input hash,
  timestamps, the session's state read, a lock, each event's runs as one JSON array),
  its runs in ``hook_run_sets`` as the ledger writes them, and in two columns of the
  call's own row (added to that file only): the least any design of these promises
  pays on each schema.

``ledger_throughput`` runs workers (``multiprocessing``, spawn) that each open
their own ``Guard`` and ``Ledger`` on ONE shared file, make one warm-up call,
wait for a common start signal, then make N guarded calls each; it reports
calls/s, the per-call latency distribution, the rows in the file and the
failed writes (spooled records, 'database is locked' warnings), which must
be 0.

Run ``python benchmarks/bench_ledger.py`` for a cProfile breakdown of
guarded calls with the ledger.
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import multiprocessing
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from _inline import inline_call
from _timing import calibrate, table

from guardrails import AgentDefinition, Guard, HookMatcher, Ledger

TOOL = "Bash"
TOOL_INPUT = {"command": "ls"}
TOOL_OUTPUT = "README.md\nguardrails\ntests\n"
TARGET_RATIO = 1.5
BUSY_TIMEOUT = 5.0  # seconds, the Ledger default
CALL_REPEATS = 9
CALL_TARGET_NS = 150_000_000
#: (processes, calls per process) of ``ledger_throughput``
THROUGHPUT_CASES: list[tuple[int, int]] = [(1, 3_000), (4, 2_000), (8, 1_000)]
#: rounds of ``ledger_throughput`` (cases interleaved within a round); median and spread
THROUGHPUT_ROUNDS = 3


def _tool(command: str) -> str:
    return TOOL_OUTPUT


def _noop(event: Any, ctx: Any) -> None:
    return None


def _noop2(event: Any, ctx: Any) -> None:
    return None


def _noop_post(event: Any, ctx: Any) -> None:
    return None


def _definition() -> AgentDefinition:
    return AgentDefinition(
        name="bench",
        hooks={
            "PreToolUse": [HookMatcher(matcher=TOOL, hooks=[_noop, _noop2])],
            "PostToolUse": [HookMatcher(matcher=TOOL, hooks=[_noop_post])],
        },
    )


def _guarded(ledger: Ledger | None) -> tuple[Guard, Callable[[Any], Any]]:
    guard = Guard(_definition(), ledger=ledger if ledger is not None else False)
    run = guard.sync.run_tool

    def call(_: Any) -> Any:
        return run(TOOL, TOOL_INPUT, _tool)

    return guard, call


# --- the hand-written floors -------------------------------------------------------


def _raw(path: str, durable: bool) -> sqlite3.Connection:
    """The real schema on ``path`` (via a Ledger, then closed), and a raw connection
    with the ledger's pragmas."""
    Ledger(path, durable=durable).close()
    conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
    return conn


_FLOOR_INSERT = (
    "INSERT INTO tool_calls (session_id, agent_name, tool_call_id, tool_name, "
    "tool_call_arguments, final_arguments, arguments_hash, decision, status, started_at, pid) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, 'allow', 'pending', ?, ?)"
)
_FLOOR_UPDATE = (
    "UPDATE tool_calls SET status = 'ok', tool_call_result = ?, result_bytes = ?, "
    "finished_at = ?, duration_ms = ? WHERE session_id = ? AND tool_call_id = ?"
)


def _floor(conn: sqlite3.Connection) -> Callable[[Any], Any]:
    """One INSERT (pending) before the tool, one UPDATE (ok) after, each committed."""
    ex = conn.execute
    sid = "floor-session"
    args = json.dumps(TOOL_INPUT, ensure_ascii=False)
    ahash = hashlib.sha256(args.encode()).hexdigest()
    at = "2025-01-01T00:00:00.000Z"
    pid = os.getpid()
    tool_input = TOOL_INPUT
    perf = time.perf_counter
    urandom = os.urandom

    def floor(_: Any) -> Any:
        call_id = "toolu_" + urandom(12).hex()
        ex("BEGIN IMMEDIATE")
        ex(_FLOOR_INSERT, (sid, "bench", call_id, TOOL, args, args, ahash, at, pid))
        ex("COMMIT")
        t0 = perf()
        out = _tool(**tool_input)
        dt = (perf() - t0) * 1000
        result = json.dumps(out, ensure_ascii=False)
        ex("BEGIN IMMEDIATE")
        ex(_FLOOR_UPDATE, (result, len(result), at, dt, sid, call_id))
        ex("COMMIT")
        return out

    return floor


def _floor_ledger_statements(conn: sqlite3.Connection) -> Callable[[Any], Any] | None:
    """The ledger's own statements per call (4, in 2 transactions: the hot path's plain
    INSERT and UPDATE by row id, and each event's hook runs as one ``hook_run_sets`` row),
    parameters precomputed: what the SQL alone costs. None if the statements are not found."""
    try:
        from guardrails.ledger.sqlite_write import _POST_UPDATE, _PRE_INSERT
        from guardrails.ledger.sqlite_write import SQL as _SQL  # the statement table

        sql = {"hook_runs": _SQL["hook_runs"]}
        sql["pre"], sql["post"] = _PRE_INSERT, _POST_UPDATE  # the hot path's, by row id
    except (ImportError, KeyError):
        return None
    ex = conn.execute
    sid = "floor-session"
    args = json.dumps(TOOL_INPUT, ensure_ascii=False)
    ahash = hashlib.sha256(args.encode()).hexdigest()
    at = "2025-01-01T00:00:00.000Z"
    pid = os.getpid()
    result = json.dumps(TOOL_OUTPUT, ensure_ascii=False)
    pre_runs = json.dumps([[h, TOOL, 100, "noop", 0.001, None, 0] for h in ("_noop", "_noop2")])
    post_runs = json.dumps([["_noop_post", TOOL, 100, "noop", 0.001, None, 0]])
    urandom = os.urandom

    def floor(_: Any) -> Any:
        cid = "toolu_" + urandom(12).hex()
        ex("BEGIN IMMEDIATE")
        pre = (sid, "bench", None, None, cid, TOOL, args, args, ahash, "allow", None, "pending",
               at, None, None, pid, None, sid)  # fmt: skip
        rowid = ex(sql["pre"], pre).lastrowid
        ex(sql["hook_runs"], (sid, "PreToolUse", cid, None, at, pre_runs, 0))
        ex("COMMIT")
        out = _tool(**TOOL_INPUT)
        ex("BEGIN IMMEDIATE")
        ex(sql["post"], (args, "ok", result, 0, len(result), None, None, at, 0.001, at, rowid, sid,
                         cid))  # fmt: skip
        ex(sql["hook_runs"], (sid, "PostToolUse", cid, None, at, post_runs, 0))
        ex("COMMIT")
        return out

    return floor


# --- timing ----------------------------------------------------------------------


def _loop(fn: Callable[[Any], Any], loops: int) -> int:
    rng = range(loops)
    enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        for _ in rng:
            fn(None)
        return time.perf_counter_ns() - t0
    finally:
        if enabled:
            gc.enable()


#: per-repeat ns per call of the last ``_compare``, by position (for ratio spreads)
_SAMPLES: list[list[float]] = []


def _compare(fns: Sequence[Callable[[Any], Any]], warmup: int) -> list[float]:
    """Median ns per call; like ``_timing.compare`` with longer repeats (a commit
    is ~1000x a dispatch, and WAL checkpoints must be averaged in). The repeats are
    kept in ``_SAMPLES``: a ratio's spread is over the pairs of one repeat."""
    for fn in fns:
        _loop(fn, warmup)
    loops = [calibrate(fn, None, CALL_TARGET_NS) for fn in fns]
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(CALL_REPEATS):
        for i, fn in enumerate(fns):
            samples[i].append(_loop(fn, loops[i]) / loops[i])
    _SAMPLES[:] = samples
    return [statistics.median(s) for s in samples]


def _spread(a: int, b: int) -> str:
    """Median and min-max of the per-repeat ratios ``_SAMPLES[a] / _SAMPLES[b]``."""
    ratios = [x / y for x, y in zip(_SAMPLES[a], _SAMPLES[b], strict=True)]
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def _us(ns: float | None) -> str:
    return "n/a" if ns is None else f"{ns / 1000:,.1f}"


def _x(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or b is None or not b else f"{a / b:.2f}x"


def _check(guard: Guard) -> list[str]:
    """One guarded call traced on the ledger's connection: the statements it runs.
    Also checks the rows it leaves."""
    ledger = guard.ledger
    assert ledger is not None
    conn = ledger._conn  # read-only use: count what the hot path sends to SQLite
    assert conn is not None, ledger.degraded
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        run = guard.sync.run_tool(TOOL, TOOL_INPUT, _tool)
    finally:
        conn.set_trace_callback(None)
    assert run.ok, run
    cid = run.pre.event.tool_use_id  # type: ignore[attr-defined]
    status = conn.execute("SELECT status FROM tool_calls WHERE tool_call_id = ?", (cid,))
    assert status.fetchone() == ("ok",), cid
    hooks = conn.execute("SELECT count(*) FROM hook_runs WHERE tool_call_id = ?", (cid,))
    assert hooks.fetchone() == (3,)
    kinds = []
    for stmt in seen:
        words = stmt.split()
        verb = words[0].upper()
        table_ = words[2] if verb == "INSERT" else words[1] if verb == "UPDATE" else ""
        kinds.append(f"{verb} {table_}".rstrip())
    return kinds


def ledger_call() -> None:
    """Ledger cost of one guarded call: hookrails vs a raw sqlite3 floor."""
    doc = (__doc__ or "").split("\n\n", 1)[-1]
    print(doc.split("``ledger_throughput``", 1)[0].rstrip())
    print()
    with tempfile.TemporaryDirectory(prefix="hookrails-bench-") as tmp:
        _, bare = _guarded(None)
        led = Ledger(os.path.join(tmp, "ledger.db"))
        guard, guarded = _guarded(led)
        kinds = _check(guard)
        floor_conn = _raw(os.path.join(tmp, "floor.db"), durable=False)
        floor = _floor(floor_conn)
        same_conn = _raw(os.path.join(tmp, "floor-same.db"), durable=False)
        same = _floor_ledger_statements(same_conn)
        inline = [
            inline_call(
                _raw(os.path.join(tmp, f"inline-{in_row}.db"), durable=False), led, _tool, TOOL,
                TOOL_INPUT, [("_noop", _noop), ("_noop2", _noop2)],
                [("_noop_post", _noop_post)], runs_in_row=in_row,
            )
            for in_row in (False, True)
        ]  # fmt: skip
        fns = [bare, floor, guarded, *inline] + ([same] if same is not None else [])
        res = _compare(fns, warmup=200)
        spread = _spread(2, 1)
        inline_spread = [_spread(3, 1), _spread(4, 1)]
        rate = [y / x for x, y in zip(_SAMPLES[2], _SAMPLES[1], strict=True)]
        # the promises inline plus the dispatch alone, per repeat: the least this
        # framework's guarded call can cost (the no-op hooks' calls are in both, ~0.3 us)
        least = [
            [(i + b) / f for i, b, f in zip(_SAMPLES[k], _SAMPLES[0], _SAMPLES[1], strict=True)]
            for k in (3, 4)
        ]
        bare_ns, floor_ns, led_ns, sets_ns, row_ns = res[:5]
        same_ns = res[5] if same is not None else None

        dled = Ledger(os.path.join(tmp, "durable.db"), durable=True)
        _, dguarded = _guarded(dled)
        dfloor_conn = _raw(os.path.join(tmp, "floor-full.db"), durable=True)
        dfloor = _floor(dfloor_conn)
        dsame_conn = _raw(os.path.join(tmp, "floor-full-same.db"), durable=True)
        dsame = _floor_ledger_statements(dsame_conn)
        dfns = [dfloor, dguarded] + ([dsame] if dsame is not None else [])
        dres = _compare(dfns, warmup=20)
        dspread = _spread(1, 0)
        dfloor_ns, dled_ns = dres[:2]
        dsame_ns = dres[2] if dsame is not None else None
        degraded = [f"{x.path}: {x.degraded}" for x in (led, dled) if x.degraded is not None]
        for c in (floor_conn, same_conn, dfloor_conn, dsame_conn):
            c.close()
        led.close()
        dled.close()

    rows = [
        ["no ledger (dispatch only)", _us(bare_ns), _x(bare_ns, floor_ns), ""],
        ["floor NORMAL: 1 INSERT + 1 UPDATE", _us(floor_ns), "1.00x", ""],
        ["hookrails Ledger()", _us(led_ns), spread, _us(led_ns - bare_ns)],
        ["floor NORMAL, ledger's statements", _us(same_ns), _x(same_ns, floor_ns), ""],
        ["inline promises, runs in hook_run_sets", _us(sets_ns), inline_spread[0], ""],
        ["inline promises, runs in the call's row", _us(row_ns), inline_spread[1], ""],
        ["floor FULL: 1 INSERT + 1 UPDATE", _us(dfloor_ns), "1.00x", ""],
        [
            "hookrails Ledger(durable=True)",
            _us(dled_ns),
            dspread,
            _us(dled_ns - bare_ns),
        ],
        ["floor FULL, ledger's statements", _us(dsame_ns), _x(dsame_ns, dfloor_ns), ""],
    ]
    print(table(["guarded call (2 pre + 1 post hooks)", "us/call", "vs floor", "ledger us"], rows))
    counts = {k: kinds.count(k) for k in dict.fromkeys(kinds)}
    print("\nledger us: hookrails minus 'no ledger'; hookrails' ratio: median (min-max) of the")
    print(f"per-repeat ratios of {CALL_REPEATS} interleaved repeats.")
    print(
        f"One process, sequential calls: hookrails makes {statistics.median(rate):.0%} "
        f"({min(rate):.0%}-{max(rate):.0%}) of the floor's calls/s (NORMAL); target >= 70%."
    )
    print("SQL per guarded call, ledger: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    print(
        "SQL per guarded call, floor:  2 BEGIN, 1 INSERT tool_calls, 1 UPDATE tool_calls, 2 COMMIT"
    )
    if same_ns is not None:
        print(
            f"Of the ledger's {_us(led_ns - bare_ns)} us, its statements alone (on a raw "
            f"connection) take {_us(same_ns)} us;\nthe rest, {_us(led_ns - bare_ns - same_ns)} us, "
            "is Python work around them (redaction, JSON, hashing, timestamps, records)."
        )
    print(
        f"Written inline, the promises alone take {_x(sets_ns, floor_ns)} the floor with "
        f"today's schema and {_x(row_ns, floor_ns)}\nwith each call's runs in its own row "
        f"(hookrails: {_x(led_ns, floor_ns)})."
    )
    for where, r in zip(("today's schema", "each call's runs in its own row"), least, strict=True):
        m = statistics.median(r)
        print(
            f"The promises inline plus the dispatch alone, {where}: {m:.2f}x "
            f"({min(r):.2f}-{max(r):.2f})\nthe floor, {1 / m:.0%} of its calls/s: the least "
            "any ledger in this framework pays."
        )
    if degraded:
        print("\nWARNING: a ledger spooled instead of writing, its times are not the ledger's:")
        print("\n".join(f"  {d}" for d in degraded))
    print(f"\nTarget: the ledger within {TARGET_RATIO:g}x the floor (reported, not asserted):")
    for label, a, b in (
        ("synchronous=NORMAL", led_ns, floor_ns),
        ("durable=True (FULL)", dled_ns, dfloor_ns),
    ):
        verdict = "MET" if a <= TARGET_RATIO * b else "NOT MET"
        print(f"  {label}: {verdict} ({a / b:.2f}x the floor)")


# --- throughput ------------------------------------------------------------------


class _Counter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.locked = 0
        self.other = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "locked" in record.getMessage().lower():
            self.locked += 1
        else:
            self.other += 1


def _worker(path: str, calls: int, start: Any, out: Any) -> None:
    """One process: its own Guard and Ledger on the shared file, ``calls`` guarded calls.

    Puts ``("ready", pid, None)`` after its warm-up call, then ``("done", pid, result)``;
    ``("error", pid, traceback)`` if anything fails."""
    import traceback

    pid = os.getpid()
    try:
        counter = _Counter()
        logging.getLogger("guardrails.ledger").addHandler(counter)
        ledger = Ledger(path)
        _, call = _guarded(ledger)
        call(None)  # warm up: statement cache, redactor, session row (not counted below)
        lat = [0] * calls
        perf = time.perf_counter_ns
        not_ok = 0
        out.put(("ready", pid, None))
        start.wait()
        t0 = perf()
        for i in range(calls):
            t = perf()
            if not call(None).ok:
                not_ok += 1
            lat[i] = perf() - t
        elapsed = perf() - t0
        ledger.close()
    except BaseException:
        out.put(("error", pid, traceback.format_exc()))
        raise
    result = {
        "elapsed_ns": elapsed,
        "lat": lat,
        "not_ok": not_ok,
        "locked": counter.locked,
        "warnings": counter.other,
    }
    out.put(("done", pid, result))


def _gather(out: Any, procs: Sequence[Any], kind: str, deadline: float) -> list[Any]:
    """One ``kind`` message per worker; fail fast if a worker fails or dies."""
    import queue

    got: list[Any] = []
    while len(got) < len(procs):
        try:
            tag, pid, payload = out.get(timeout=0.2)
        except queue.Empty:
            dead = [p for p in procs if p.exitcode not in (None, 0)]
            if dead or time.monotonic() > deadline:
                raise RuntimeError(
                    f"throughput worker(s) failed or timed out waiting for {kind!r}: "
                    + ", ".join(f"pid {p.pid} exit {p.exitcode}" for p in procs)
                ) from None
            continue
        if tag == "error":
            raise RuntimeError(f"throughput worker {pid} failed:\n{payload}")
        if tag == kind:
            got.append(payload)
    return got


def _throughput(tmp: str, processes: int, calls: int) -> dict[str, Any]:
    path = os.path.join(tmp, f"shared-{processes}.db")
    with Ledger(path) as first:  # schema first, so workers do not race on the migrations
        spools = {path + ".spool.jsonl", first.spool_path}
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    out = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(path, calls, start, out)) for _ in range(processes)]
    for p in procs:
        p.start()
    try:
        _gather(out, procs, "ready", time.monotonic() + 120)
        t0 = time.perf_counter_ns()
        start.set()
        results = _gather(out, procs, "done", time.monotonic() + 600)
        wall = time.perf_counter_ns() - t0
    except BaseException:
        for p in procs:  # only the workers started here, by handle
            if p.exitcode is None:
                p.terminate()
        raise
    finally:
        for p in procs:
            p.join(timeout=30)
    spool = 0
    for candidate in spools:
        if os.path.exists(candidate):
            with open(candidate, encoding="utf-8") as fh:
                spool += sum(1 for _ in fh)
    conn = sqlite3.connect(path)
    try:
        calls_rows = conn.execute("SELECT count(*) FROM tool_calls").fetchone()[0]
        ok_rows = conn.execute("SELECT count(*) FROM tool_calls WHERE status = 'ok'").fetchone()[0]
        hook_rows = conn.execute("SELECT count(*) FROM hook_runs").fetchone()[0]
    finally:
        conn.close()
    lat = sorted(x for r in results for x in r["lat"])
    return {
        "wall_ns": wall,
        "per_process": [calls * 1e9 / r["elapsed_ns"] for r in results],
        "p50": lat[len(lat) // 2],
        "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))],
        "p999": lat[min(len(lat) - 1, int(len(lat) * 0.999))],
        "max": lat[-1],
        "rows": calls_rows - processes,  # minus each worker's warm-up call
        "ok_rows": ok_rows - processes,
        "hook_rows": hook_rows - 3 * processes,
        "not_ok": sum(r["not_ok"] for r in results),
        "locked": sum(r["locked"] for r in results),
        "warnings": sum(r["warnings"] for r in results),
        "spool": spool,
    }


def ledger_throughput() -> None:
    """Guarded calls per second with the ledger, 1 process and several on one file."""
    print(
        "Workers (multiprocessing, spawn) each open a Guard and Ledger() on ONE shared file,\n"
        "make one warm-up call, wait for a common start signal, then make N guarded calls each\n"
        "(2 pre + 1 post no-op hooks, synchronous=NORMAL). total calls/s: all calls / wall time\n"
        "from the start signal to the last result; per process: N / that process's own loop\n"
        f"time; latency over every call of the row. This machine has {os.cpu_count()} CPUs."
    )
    print()
    rows = []
    checks = []
    got: dict[tuple[int, int], list[dict[str, Any]]] = {c: [] for c in THROUGHPUT_CASES}
    with tempfile.TemporaryDirectory(prefix="hookrails-bench-") as tmp:
        for n in range(THROUGHPUT_ROUNDS):  # the cases interleaved, round after round
            for processes, calls in THROUGHPUT_CASES:
                sub = os.path.join(tmp, f"round-{n}")
                os.makedirs(sub, exist_ok=True)
                got[(processes, calls)].append(_throughput(sub, processes, calls))

    def med(values: list[float], scale: float = 1000.0) -> str:
        v = [x / scale for x in values]
        return f"{statistics.median(v):,.0f} ({min(v):,.0f}-{max(v):,.0f})"

    for (processes, calls), results in got.items():
        expected = processes * calls
        totals = [expected * 1e9 / r["wall_ns"] for r in results]
        rows.append(
            [
                f"{processes} x {calls:,}",
                med(totals, 1.0),
                med([statistics.median(r["per_process"]) for r in results], 1.0),
                med([r["p50"] for r in results]),
                med([r["p99"] for r in results]),
                med([r["p999"] for r in results]),
                med([r["max"] for r in results]),
            ]
        )
        for r in results:
            rows_ok = r["rows"] == r["ok_rows"] == expected and r["hook_rows"] == 3 * expected
            failed = r["locked"] + r["spool"] + r["not_ok"]
            checks.append(
                f"  {processes} x {calls:,}: tool_calls rows {r['rows']:,} (ok {r['ok_rows']:,}; "
                f"expected {expected:,}), hook_runs {r['hook_rows']:,} (expected "
                f"{3 * expected:,}): {'OK' if rows_ok else 'MISMATCH'}; 'database is locked' "
                f"warnings {r['locked']}, spooled records {r['spool']}, other ledger warnings "
                f"{r['warnings']}, calls not ok {r['not_ok']}: {'OK' if not failed else 'FAILED'}"
            )
    print(f"Median (min-max) of {THROUGHPUT_ROUNDS} rounds; latencies in us.")
    headers = ["processes x calls", "total calls/s", "per process calls/s", "p50", "p99"]
    print(table([*headers, "p99.9", "max"], rows))
    print("\nRows in the file (warm-up calls excluded) and failed writes (must be 0):")
    print("\n".join(checks))


# --- profile (not a section: ``python benchmarks/bench_ledger.py``) ---------------------

_BUCKETS: list[tuple[str, tuple[str, ...]]] = [
    ("sqlite execute (statements)", ("method 'execute' of 'sqlite3.Connection'",)),
    ("json.dumps", ("json/__init__.py", "json/encoder.py", "method 'encode'")),
    ("redaction", ("_redaction.py",)),
    ("input hashing", ("_canonical_json.py", "openssl_sha256", "hexdigest")),
    ("timestamps", ("common.py:iso_time", "time.strftime", "time.gmtime")),
    ("Ledger.record / rows / spool", ("ledger/sqlite.py", "ledger/records.py", "ledger/spool.py")),
    ("events / decisions", ("events.py", "_event_base.py", "results.py", "hook_refs.py")),
    ("dispatch and run_tool", ("dispatch/",)),
]


def profile(calls: int = 3_000) -> None:
    """cProfile of ``calls`` guarded calls with the ledger, self time grouped by kind."""
    import cProfile
    import pstats

    with tempfile.TemporaryDirectory(prefix="hookrails-bench-") as tmp:
        ledger = Ledger(os.path.join(tmp, "ledger.db"))
        _, call = _guarded(ledger)
        _loop(call, 200)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(calls):
            call(None)
        prof.disable()
        ledger.close()
    stats = pstats.Stats(prof)
    entries = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in entries.values())
    groups: dict[str, float] = {}
    top = []
    for (file, line, func), (_, ncalls, tottime, _, _) in entries.items():
        where = f"{file}:{func}" if file != "~" else func
        bucket = next((n for n, keys in _BUCKETS if any(k in where for k in keys)), "other")
        groups[bucket] = groups.get(bucket, 0.0) + tottime
        short = f"{os.path.basename(file)}:{line}({func})" if file != "~" else func
        top.append((tottime, ncalls, short))
    print(f"cProfile, {calls:,} guarded calls with Ledger(), self time (profiler overhead inflates")
    print("Python calls relative to C calls; compare with the unprofiled ledger_call numbers):\n")
    rows = [
        [name, f"{t / calls * 1e6:,.1f}", f"{t / total:.0%}"]
        for name, t in sorted(groups.items(), key=lambda kv: -kv[1])
    ]
    print(table(["where", "us/call", "share"], rows))
    print()
    rows = [
        [short, f"{n / calls:g}", f"{t / calls * 1e6:,.2f}"]
        for t, n, short in sorted(top, reverse=True)[:25]
    ]
    print(table(["function (self time)", "calls/call", "us/call"], rows))


if __name__ == "__main__":
    profile(int(sys.argv[1]) if len(sys.argv) > 1 else 3_000)
