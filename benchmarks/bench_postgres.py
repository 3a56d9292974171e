"""The PostgreSQL ledger for fleets: a guarded call, 8 processes, a claim, the hook relay.

Every section starts (once) a throwaway cluster of its own from the server binaries on the
machine (``_postgres.py``: the tests' cluster, ``fsync=off``, on 127.0.0.1 over TCP); with
none, each section says so in one line and the rest of ``make bench`` runs.

Method: ``ROUNDS`` rounds, each timing every column once, columns interleaved within a
round (drift hits all alike); the figure is the **median** of the rounds, the spread their
min-max; a ratio is computed per round, then its median and spread.

* ``postgres_call``: ``guard.sync.run_tool`` (no hooks) with ``Ledger(url)`` against a
  hand-written psycopg floor doing the same writes on the same server: the ledger's own
  statements and parameters for one call (captured once: session upsert and the pending
  row in one transaction, session upsert and the finished row in another), replayed by a
  plain autocommit connection with a fresh call id each time; target <= 1.3x.
* ``postgres_fleet_throughput``: 8 processes (spawn), each with its own Guard, pool and
  ``CALLS`` guarded calls (1 no-op PreToolUse hook), on one PostgreSQL database against the
  same 8 on one SQLite file: aggregate calls/s and per-call p50/p99.
* ``postgres_claim``: an idempotency claim and its completion (``IdempotencyGuard`` called
  directly, a new key each time) against a raw ``INSERT … ON CONFLICT DO NOTHING
  RETURNING`` and ``UPDATE`` on the same table.
* ``relay_cost``: one Claude Code command-hook process per PreToolUse (wall time): the
  SQLite ledger (today's default), relayed to ``hookrails serve`` on a PostgreSQL ledger
  (the chosen path), relayed with an idempotency claim, deciding locally and spooling for a
  shipper (``HOOKRAILS_RELAY=off``), and opening PostgreSQL in the hook process itself
  (what the relay avoids); then what shipping a spooled record costs ``serve``.
"""

from __future__ import annotations

import atexit
import json
import multiprocessing
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable, Sequence
from typing import Any

import _postgres
from _timing import table

from guardrails import AgentDefinition, Guard, HookMatcher, Ledger, PostToolUse, PreToolUse

ROUNDS = 5
CALLS = 300
FLEET = 8
FLEET_CALLS = 250
FLEET_ROUNDS = 3
HOOK_ROUNDS = 3
HOOK_RUNS = 3

_cluster: list[Any] = []


def _server() -> tuple[Any, str]:
    """The section's cluster (started once for the run, stopped at exit), or the reason."""
    if not _cluster:
        manager = _postgres.cluster()
        started, why = manager.__enter__()
        _cluster.append((started, why))
        if started is not None:
            atexit.register(manager.__exit__, None, None, None)
    return _cluster[0]  # type: ignore[no-any-return]


def _spread(values: Sequence[float], fmt: str = "{:,.0f}") -> tuple[str, str]:
    return fmt.format(statistics.median(values)), (
        f"{fmt.format(min(values))}-{fmt.format(max(values))}"
    )


def _rounds(columns: Sequence[Callable[[], float]], rounds: int = ROUNDS) -> list[list[float]]:
    """Each column's figure per round, columns interleaved within a round."""
    for col in columns:
        col()  # warm up
    out: list[list[float]] = [[] for _ in columns]
    for _ in range(rounds):
        for i, col in enumerate(columns):
            out[i].append(col())
    return out


def _ratio_row(name: str, got: list[float], floor: list[float]) -> list[str]:
    ratios = [g / f for g, f in zip(got, floor, strict=True)]
    return [name, *_spread(got), *_spread(ratios, "{:.2f}")]


def _tool(**_: Any) -> str:
    return "ok"


# --- a guarded call against the psycopg floor -------------------------------------------------


def _captured(url: str) -> tuple[list[list[tuple[str, list[Any]]]], str]:
    """The ledger's statements for one guarded call (one list per transaction), and its id."""
    from guardrails.ledger import postgres_write as pgw

    seen: list[list[tuple[str, list[Any]]]] = []
    real = pgw.execute

    def spy(conn: Any, ops: Any) -> None:
        seen.append([(n, list(p)) for n, p in ops])
        real(conn, ops)

    pgw.execute = spy  # type: ignore[assignment]
    try:
        guard = Guard(AgentDefinition(name="bench"), ledger=Ledger(url))
        run = guard.sync.run_tool("Bash", {"command": "ls"}, _tool, tool_use_id="toolu_capture")
        assert run.ok
        guard.ledger.close()  # type: ignore[union-attr]
    finally:
        pgw.execute = real  # type: ignore[assignment]
    return seen, "toolu_capture"


def _floor(url: str) -> Callable[[], float]:
    import psycopg

    from guardrails.ledger.postgres_write import SQL

    events, old = _captured(url)
    conn = psycopg.connect(url, autocommit=True, options="-c TimeZone=UTC")

    def run() -> float:
        t0 = time.perf_counter_ns()
        for _ in range(CALLS):
            call = "toolu_" + secrets.token_hex(12)
            for i, ops in enumerate(events):
                with conn.transaction():
                    for name, params in ops:
                        values = [call if p == old else p for p in params]
                        if name in ("pre", "post", "event"):
                            values.append(values[0])
                        conn.execute(SQL[name], values)
                if i == 0:
                    _tool(command="ls")
        return (time.perf_counter_ns() - t0) / CALLS / 1000

    return run


def _guarded(location: str, hooks: int = 0) -> Callable[[], float]:
    defn = AgentDefinition(
        name="bench",
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[_noop] * hooks)]} if hooks else {},
    )
    guard = Guard(defn, ledger=Ledger(location))
    call = guard.sync.run_tool

    def run() -> float:
        t0 = time.perf_counter_ns()
        for _ in range(CALLS):
            call("Bash", {"command": "ls"}, _tool)
        return (time.perf_counter_ns() - t0) / CALLS / 1000

    return run


def postgres_call() -> None:
    """A guarded call with the ledger on PostgreSQL against a hand-written psycopg floor."""
    started, why = _server()
    if started is None:
        print(f"PostgreSQL: {why}")
        return
    print(
        f"{CALLS} calls per round, {ROUNDS} rounds interleaved; us per call, median (spread);\n"
        "floor: the ledger's own statements for a call replayed by a plain psycopg connection."
    )
    floor, ledger = _rounds(
        [_floor(_postgres.database(started)), _guarded(_postgres.database(started))]
    )
    print()
    print(
        table(
            ["per guarded call", "median us", "spread us", "x floor", "ratio spread"],
            [
                ["psycopg floor, same writes", *_spread(floor), "1.00", ""],
                _ratio_row("hookrails, Ledger(url)", ledger, floor),
            ],
        )
    )
    ratio = statistics.median(g / f for g, f in zip(ledger, floor, strict=True))
    print(f"\ntarget: hookrails within 1.3x of the floor: {'MET' if ratio <= 1.3 else 'MISSED'}")


# --- 8 processes: PostgreSQL against one SQLite file ----------------------------------------


def _noop(event: Any, ctx: Any) -> None:
    return None


def _fleet_worker(location: str, calls: int, start: Any, out: Any) -> None:
    try:
        defn = AgentDefinition(
            name="bench", hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[_noop])]}
        )
        guard = Guard(defn, ledger=Ledger(location))
        guard.sync.run_tool("Bash", {"command": "ls"}, _tool)  # warm: the pool, the session row
        out.put(("ready", os.getpid(), None))
        start.wait()
        lat = []
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            t = time.perf_counter_ns()
            guard.sync.run_tool("Bash", {"command": "ls"}, _tool)
            lat.append(time.perf_counter_ns() - t)
        out.put(("done", os.getpid(), (time.perf_counter_ns() - t0, lat)))
        guard.ledger.close()  # type: ignore[union-attr]
    except BaseException as exc:
        out.put(("error", os.getpid(), repr(exc)))


def _fleet(location: str) -> dict[str, float]:
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_fleet_worker, args=(location, FLEET_CALLS, start, out))
        for _ in range(FLEET)
    ]
    for p in procs:
        p.start()
    for _ in procs:
        kind, _pid, data = out.get(timeout=120)
        if kind == "error":
            raise RuntimeError(data)
    t0 = time.perf_counter_ns()
    start.set()
    lat: list[int] = []
    for _ in procs:
        kind, _pid, data = out.get(timeout=300)
        if kind == "error":
            raise RuntimeError(data)
        lat += data[1]
    wall = time.perf_counter_ns() - t0
    for p in procs:
        p.join()
    lat.sort()
    return {
        "calls_s": FLEET * FLEET_CALLS * 1e9 / wall,
        "p50": lat[len(lat) // 2] / 1000,
        "p99": lat[int(len(lat) * 0.99)] / 1000,
    }


def postgres_fleet_throughput() -> None:
    """8 processes on one PostgreSQL database against the same 8 on one SQLite file."""
    started, why = _server()
    if started is None:
        print(f"PostgreSQL: {why}")
        return
    print(
        f"{FLEET} processes x {FLEET_CALLS} guarded calls (1 no-op PreToolUse hook), each its own\n"
        f"Guard and ledger; {FLEET_ROUNDS} rounds, engines interleaved; this machine has "
        f"{os.cpu_count()} CPUs (the server shares them)."
    )
    with tempfile.TemporaryDirectory(prefix="hookrails-bench-") as tmp:
        results: dict[str, list[dict[str, float]]] = {"postgres": [], "sqlite": []}
        for r in range(FLEET_ROUNDS):
            results["postgres"].append(_fleet(_postgres.database(started)))
            results["sqlite"].append(_fleet(os.path.join(tmp, f"fleet{r}.db")))
    rows = []
    for engine, got in results.items():
        rows.append(
            [
                engine,
                *_spread([g["calls_s"] for g in got]),
                *_spread([g["p50"] for g in got]),
                *_spread([g["p99"] for g in got]),
            ]
        )
    pg, lite = results["postgres"], results["sqlite"]
    ratios = [p["calls_s"] / s["calls_s"] for p, s in zip(pg, lite, strict=True)]
    print()
    print(table(["engine", "calls/s", "spread", "p50 us", "spread", "p99 us", "spread"], rows))
    median, spread = _spread(ratios, "{:.2f}")
    print(f"\nPostgreSQL / SQLite throughput: {median}x ({spread})")


# --- an idempotency claim against INSERT … ON CONFLICT -----------------------------------------


def _claim_hook(url: str) -> Callable[[], float]:
    from guardrails.builtins import IdempotencyGuard

    hook = IdempotencyGuard()
    defn = AgentDefinition(name="bench", tools={"charge": {"side_effects": True}})
    guard = Guard(defn, ledger=Ledger(url))
    ctx = types.SimpleNamespace(
        guard=guard, definition=defn, state={}, session_id="s", clock=time.time
    )

    def run() -> float:
        events = []
        for i in range(CALLS):
            call = "toolu_" + secrets.token_hex(12)
            inp = {"amount": i, "nonce": secrets.token_hex(8)}
            pre = PreToolUse(
                session_id="s", cwd="/", tool_name="charge", tool_input=inp, tool_use_id=call
            )
            post = PostToolUse(
                session_id="s",
                cwd="/",
                tool_name="charge",
                tool_input=inp,
                tool_use_id=call,
                tool_response={"ok": 1},
            )
            events.append((pre, post))
        t0 = time.perf_counter_ns()
        for pre, post in events:
            hook(pre, ctx)
            hook(post, ctx)
        return (time.perf_counter_ns() - t0) / CALLS / 1000

    return run


_INSERT = (
    "INSERT INTO idempotency_keys (key, scope, session_id, agent_id, tool_name, payload_hash, "
    "state, tool_call_id, result, created_at, updated_at, expires_at, lease_expires_at) "
    "VALUES (%s, 'session', 's', NULL, 'charge', %s, 'in_progress', %s, NULL, %s, %s, %s, %s) "
    "ON CONFLICT (key) DO NOTHING RETURNING key"
)
_UPDATE = (
    "UPDATE idempotency_keys SET state = 'completed', result = %s, updated_at = %s, "
    "lease_expires_at = NULL WHERE key = %s AND tool_call_id = %s AND state = 'in_progress'"
)


def _claim_floor(url: str) -> Callable[[], float]:
    import hashlib

    import psycopg

    Ledger(url).close()  # the schema
    conn = psycopg.connect(url, autocommit=True, options="-c TimeZone=UTC")
    at, until = "2025-01-01T00:00:00.000Z", "2025-01-02T00:00:00.000Z"

    def run() -> float:
        keys = [hashlib.sha256(secrets.token_bytes(16)).hexdigest() for _ in range(CALLS)]
        t0 = time.perf_counter_ns()
        for key in keys:
            call = "toolu_" + key[:24]
            got = conn.execute(_INSERT, (key, key, call, at, at, until, until)).fetchone()
            assert got is not None
            conn.execute(_UPDATE, ('{"ok":1}', at, key, call))
        return (time.perf_counter_ns() - t0) / CALLS / 1000

    return run


def postgres_claim() -> None:
    """An idempotency claim on PostgreSQL against a raw INSERT … ON CONFLICT."""
    started, why = _server()
    if started is None:
        print(f"PostgreSQL: {why}")
        return
    print(
        f"claim + completion of a new key, {CALLS} per round, {ROUNDS} rounds interleaved;\n"
        "floor: INSERT … ON CONFLICT DO NOTHING RETURNING, then UPDATE, autocommit."
    )
    floor, hook = _rounds(
        [_claim_floor(_postgres.database(started)), _claim_hook(_postgres.database(started))]
    )
    print()
    print(
        table(
            ["per claim + completion", "median us", "spread us", "x floor", "ratio spread"],
            [
                ["raw INSERT … ON CONFLICT", *_spread(floor), "1.00", ""],
                _ratio_row("IdempotencyGuard", hook, floor),
            ],
        )
    )


# --- the command hook: relay or shipper ---------------------------------------------------------

_DEFINITION = """\
name: team
tools:
  charge:
    side_effects: true
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [deny_commands]
    - matcher: charge
      hooks: [idempotency_guard]
"""
#: a hook process that opens the PostgreSQL ledger itself (what the relay avoids)
_DIRECT = (
    "import sys\n"
    "from guardrails.claude_code import hook_command as h\n"
    "from guardrails.ledger.sqlite import Ledger\n"
    "h._relayed = lambda *a: None\n"
    "h._open_ledger = lambda loc, d: Ledger(loc, definition=d)\n"
    "h.finish(h.main(sys.argv[1:]))\n"
)


def _event(tool: str, tool_input: dict[str, Any]) -> bytes:
    return json.dumps(
        {
            "hook_event_name": "PreToolUse", "session_id": "bench", "cwd": "/tmp",
            "transcript_path": "/tmp/t.jsonl", "permission_mode": "default",
            "tool_name": tool, "tool_input": tool_input,
            "tool_use_id": "toolu_" + secrets.token_hex(12),
        }
    ).encode()  # fmt: skip


def _hook_process(
    argv: list[str], env: dict[str, str], cwd: str, tool: str = "Bash"
) -> Callable[[], float]:
    def run() -> float:
        times = []
        for _ in range(HOOK_RUNS):
            payload = _event(
                tool, {"command": "ls"} if tool == "Bash" else {"nonce": secrets.token_hex(8)}
            )
            t0 = time.perf_counter_ns()
            done = subprocess.run(argv, input=payload, capture_output=True, env=env, cwd=cwd)
            times.append((time.perf_counter_ns() - t0) / 1e6)
            if done.returncode != 0:
                raise RuntimeError(done.stderr.decode(errors="replace"))
        return statistics.median(times)

    return run


def relay_cost() -> None:
    """A command hook on a PostgreSQL ledger: relay through serve, or spool for a shipper."""
    started, why = _server()
    if started is None:
        print(f"PostgreSQL: {why}")
        return
    from guardrails.claude_code.http_server import make_server
    from guardrails.ledger.postgres_spool import SpoolOnlyLedger

    url = _postgres.database(started)
    with tempfile.TemporaryDirectory(prefix="hookrails-bench-") as tmp:
        config = os.path.join(tmp, "agent.yaml")
        with open(config, "w") as fh:
            fh.write(_DEFINITION)
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("HOOKRAILS_", "PYTHONDONTWRITE"))
        }
        base.update(
            PYTHONPYCACHEPREFIX=os.path.join(tmp, "pyc"),
            HOOKRAILS_CACHE_DIR=os.path.join(tmp, "cache"),
        )
        old = os.environ.get("HOOKRAILS_LEDGER")
        os.environ["HOOKRAILS_LEDGER"] = url
        try:
            guard = Guard(config, ledger=True)
        finally:
            if old is None:
                os.environ.pop("HOOKRAILS_LEDGER")
            else:
                os.environ["HOOKRAILS_LEDGER"] = old
        server = make_server(guard, "127.0.0.1", 0, None)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        hook = [sys.executable, "-m", "guardrails", "hook", "--config", config]
        pg = dict(base, HOOKRAILS_LEDGER=url, HOOKRAILS_RELAY=server.url)
        columns = {
            "SQLite ledger (default)": _hook_process(
                hook, dict(base, HOOKRAILS_LEDGER=os.path.join(tmp, "l.db")), tmp
            ),
            "relay to serve (chosen)": _hook_process(hook, pg, tmp),
            "relay, with a claim": _hook_process(hook, pg, tmp, "charge"),
            "local decision + spool": _hook_process(hook, dict(pg, HOOKRAILS_RELAY="off"), tmp),
            "PostgreSQL in the hook": _hook_process(
                [sys.executable, "-c", _DIRECT, "--config", config],
                dict(pg, HOOKRAILS_RELAY="off"),
                tmp,
            ),
        }
        got = _rounds(list(columns.values()), HOOK_ROUNDS)
        server.shutdown()
        server.server_close()
        server.app.close()
        # what shipping costs serve: spool records, then one recover
        spool = SpoolOnlyLedger(url)
        from guardrails.results import Decision

        n = 500
        for i in range(n):
            event = PreToolUse(
                session_id="ship",
                cwd="/",
                tool_name="Bash",
                tool_input={"command": "ls"},
                tool_use_id=f"s{i}",
            )
            spool.record(Decision(event, "allow"), time.time(), agent="team", tenant=None)
        t0 = time.perf_counter_ns()
        report = guard.ledger.recover()  # type: ignore[union-attr]
        ship_us = (time.perf_counter_ns() - t0) / max(report.imported, 1) / 1000
        guard.ledger.close()  # type: ignore[union-attr]
    print(
        f"wall ms of one hook process per PreToolUse, median of {HOOK_RUNS} runs per round, "
        f"{HOOK_ROUNDS} rounds interleaved\n(cache warm; serve in this process on 127.0.0.1)."
    )
    print()
    base_ms = got[1]
    print(
        table(
            ["hook process", "median ms", "spread ms", "x relay", "ratio spread"],
            [_ratio_row(name, g, base_ms) for name, g in zip(columns, got, strict=True)],
        )
    )
    print(
        f"\nshipping a spooled record (serve's shipper, {report.imported} records in one "
        f"recover): {ship_us:,.0f} us each"
    )
