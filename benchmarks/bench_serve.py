"""Per-call latency of ``hookrails serve`` (Claude Code http hook) against ``hookrails hook``.

Both answer the same Claude hook input, a PreToolUse for ``Bash(rm -rf build)``,
through the same definition file (one matcher ``Bash(rm *)`` with the ``deny``
built-in), and both record every call in a ledger (each its own file):

* ``command hook``: ``python -m guardrails hook --config agent.yaml --ledger cmd.db``
  spawned per call with the input on stdin, as Claude Code runs a command hook;
  the wall time of ``subprocess.run`` (spawn, import, load, decide, record, exit).
  Median of ``RUNS`` after one warm-up run (which also fills the compiled-definition
  and bytecode caches: the steady state).
* ``http hook``: ``python -m guardrails serve --config agent.yaml --ledger http.db
  --port 0``, its own process (as Claude Code talks to it), in two connection modes:
  *keep-alive*, one ``http.client.HTTPConnection`` for every call; *new connection*,
  a fresh ``HTTPConnection`` per call, closed after (connect, request, answer, close:
  the issue's measure, and what a client that does not pool connections pays). The
  wall time of one call, answer read.

The three are interleaved: each of ``ROUNDS`` rounds times ``RUNS`` command-hook
processes, then ``BATCH`` keep-alive calls, then ``BATCH`` new-connection calls, then
the stdlib hook, and the ratio command / serve is taken per round and per mode
(median of the round's calls each); the report is the median of the rounds' ratios
with their spread (min-max).
* ``stdlib command hook``, for context: ``python -c`` that reads stdin with
  ``json`` and prints the same deny, no hookrails and no ledger: the floor of any
  command hook written in Python.

Every call has its own ``tool_use_id``, so each one writes a ``denied`` row; every
answer is checked to be the deny and the rows are counted after. Throughput: 4
client threads (in this process), each with its own keep-alive connection, against the
server process.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _timing import table

from guardrails.claude_code.http_server import HOOK_ROUTE

ROOT = str(Path(__file__).resolve().parent.parent)
ROUNDS = 5
RUNS = 5
WARMUP = 200
BATCH = 200
THREADS, THREAD_CALLS = 4, 500
TARGET = 50.0
DEFINITION = """\
name: bench
hooks:
  PreToolUse:
    - matcher: "Bash(rm *)"
      hooks: [{use: deny, with: {reason: "rm is not allowed here"}}]
"""
STDLIB_HOOK = (
    "import json, sys; json.load(sys.stdin); print(json.dumps({'hookSpecificOutput': "
    "{'hookEventName': 'PreToolUse', 'permissionDecision': 'deny', "
    "'permissionDecisionReason': 'rm is not allowed here'}}))"
)


def _payload(n: int, session: str = "bench") -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": "/home/user/.claude/projects/p/bench.jsonl",
            "cwd": "/home/user/project",
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "rm -rf build", "description": "Clean the build"},
            "tool_use_id": f"toolu_bench{n:08d}",
        }
    ).encode()


def _denied(answer: bytes) -> bool:
    spec = json.loads(answer).get("hookSpecificOutput") or {}
    return bool(spec.get("permissionDecision") == "deny")


def _spawned(argv: list[str], env: dict[str, str], runs: int, first: int = 0) -> list[float]:
    """Wall ms of ``runs`` command-hook processes (after one warm-up), each answer checked;
    the calls' ids start at ``first``."""
    times = []
    for n in range(runs + 1):
        t0 = time.perf_counter_ns()
        payload = _payload(first + n)
        done = subprocess.run(argv, input=payload, capture_output=True, env=env, cwd=ROOT)
        dt = (time.perf_counter_ns() - t0) / 1e6
        if done.returncode != 0 or not _denied(done.stdout):
            raise RuntimeError(f"{argv[:4]} did not deny: {done.returncode} {done.stderr!r}")
        if n:
            times.append(dt)
    return times


def _served(conn: http.client.HTTPConnection, first: int, calls: int) -> list[float]:
    """Wall ms of ``calls`` http hook calls on one warm connection, each answer checked."""
    headers = {"Content-Type": "application/json"}
    times = []
    for n in range(first, first + calls):
        body = _payload(n)
        t0 = time.perf_counter_ns()
        conn.request("POST", HOOK_ROUTE, body, headers)
        answer = conn.getresponse().read()
        times.append((time.perf_counter_ns() - t0) / 1e6)
        if not _denied(answer):
            raise RuntimeError(f"the server did not deny: {answer!r}")
    return times


def _fresh(host: str, port: int, first: int, calls: int) -> list[float]:
    """Wall ms of ``calls`` http hook calls, each on a new connection closed after it."""
    headers = {"Content-Type": "application/json"}
    times = []
    for n in range(first, first + calls):
        body = _payload(n)
        t0 = time.perf_counter_ns()
        conn = http.client.HTTPConnection(host, port)
        conn.request("POST", HOOK_ROUTE, body, headers)
        answer = conn.getresponse().read()
        conn.close()
        times.append((time.perf_counter_ns() - t0) / 1e6)
        if not _denied(answer):
            raise RuntimeError(f"the server did not deny: {answer!r}")
    return times


def _rows(path: Path) -> int:
    from guardrails import Ledger

    Ledger(str(path)).close()  # imports what the hook processes journaled
    conn = sqlite3.connect(path)
    try:
        return int(
            conn.execute("SELECT count(*) FROM tool_calls WHERE status = 'denied'").fetchone()[0]
        )
    finally:
        conn.close()


def _pct(times: list[float], p: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def _child_env(cache: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONDONTWRITEBYTECODE", "HOOKRAILS_LEDGER")
    }
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def _start_server(config: Path, db: Path, env: dict[str, str]) -> tuple[Any, str, int]:
    """``hookrails serve`` as its own process; (process, host, port) once it listens."""
    argv = [sys.executable, "-m", "guardrails", "serve", "--config", str(config)]
    argv += ["--ledger", str(db), "--port", "0"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline().decode()
        if not line:
            break
        found = re.search(r"listening on http://([^:/]+):(\d+)", line)
        if found:
            threading.Thread(target=proc.stdout.read, daemon=True).start()  # drain
            return proc, found.group(1), int(found.group(2))
    proc.kill()
    raise RuntimeError(f"hookrails serve did not start: {proc.stderr.read()!r}")  # type: ignore[union-attr]


def _ratio_line(label: str, ratios: list[float]) -> str:
    ratio = statistics.median(ratios)
    verdict = "met" if ratio >= TARGET else "NOT met"
    return (
        f"serve, {label}: {ratio:.0f}x faster than the command hook, per round "
        f"{min(ratios):.0f}-{max(ratios):.0f}x over {len(ratios)} rounds "
        f"(target >= {TARGET:g}x: {verdict})"
    )


def serve_latency() -> None:
    """hookrails serve (own process; keep-alive, new connections) vs hookrails hook, interleaved"""
    tmp = Path(tempfile.mkdtemp(prefix="hookrails-bench-serve-"))
    try:
        config = tmp / "agent.yaml"
        config.write_text(DEFINITION, encoding="utf-8")
        env = _child_env(str(tmp / "pyc"))
        py = sys.executable
        cmd_db, http_db = tmp / "cmd.db", tmp / "http.db"
        hook_argv = [py, "-m", "guardrails", "hook", "--config", str(config)]
        hook_argv += ["--ledger", str(cmd_db)]
        proc, host, port = _start_server(config, http_db, env)
        command: list[float] = []
        floor: list[float] = []
        kept: list[float] = []
        fresh: list[float] = []
        kept_ratios: list[float] = []
        fresh_ratios: list[float] = []
        try:
            conn = http.client.HTTPConnection(host, port)
            _served(conn, 0, WARMUP)
            first = WARMUP
            for k in range(ROUNDS):
                c = _spawned(hook_argv, env, RUNS, k * (RUNS + 1))
                h = _served(conn, first, BATCH)
                f = _fresh(host, port, first + BATCH, BATCH)
                first += 2 * BATCH
                floor += _spawned([py, "-c", STDLIB_HOOK], env, RUNS)
                command += c
                kept += h
                fresh += f
                kept_ratios.append(statistics.median(c) / statistics.median(h))
                fresh_ratios.append(statistics.median(c) / statistics.median(f))
            conn.close()
            per_thread: list[list[float]] = [[] for _ in range(THREADS)]

            def client(i: int) -> None:
                c = http.client.HTTPConnection(host, port)
                per_thread[i] = _served(c, first + i * THREAD_CALLS, THREAD_CALLS)
                c.close()

            pool = [threading.Thread(target=client, args=(i,)) for i in range(THREADS)]
            t0 = time.perf_counter()
            for t in pool:
                t.start()
            for t in pool:
                t.join()
            wall = time.perf_counter() - t0
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

        loaded = [t for ts in per_thread for t in ts]
        serve_p50 = statistics.median(fresh)
        rows: list[list[str]] = []
        for label, times in (
            ("http hook: hookrails serve (own process), keep-alive client", kept),
            ("http hook: hookrails serve (own process), new connection per call", fresh),
            ("command hook: python -m guardrails hook", command),
            ("stdlib command hook (floor; no hookrails, no ledger)", floor),
        ):
            p50 = statistics.median(times)
            rows.append(
                [
                    label,
                    f"{p50:.3f}",
                    f"{_pct(times, 0.9):.3f}",
                    f"{_pct(times, 0.99):.3f}",
                    str(len(times)),
                    f"{p50 / serve_p50:.1f}x",
                ]
            )
        headers = ["per call (ms)", "p50", "p90", "p99", "calls", "vs new conn."]
        print(table(headers, rows))
        print()
        print(_ratio_line("keep-alive", kept_ratios))
        print(_ratio_line("new connection per call", fresh_ratios))
        print(
            f"{THREADS} client threads x {THREAD_CALLS} calls (keep-alive) on one server "
            f"process: {len(loaded) / wall:,.0f} calls/s, p50 "
            f"{statistics.median(loaded):.3f} ms, p99 {_pct(loaded, 0.99):.3f} ms"
        )
        expected_http = first + THREADS * THREAD_CALLS
        print(
            f"ledger rows (denied): serve {_rows(http_db)}/{expected_http}, "
            f"command hook {_rows(cmd_db)}/{ROUNDS * (RUNS + 1)}"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _main(argv: list[str]) -> Any:
    serve_latency()


if __name__ == "__main__":
    _main(sys.argv[1:])
