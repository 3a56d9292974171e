"""Every shipped view and saved query, and ``GET /v1/stats``, on a ledger of 1M calls.

The ledger is made by :mod:`gen_ledger` (``QUERY_CALLS`` calls, ``executemany``) with the
schema of the code under test, and kept in the temporary folder per schema version and
size, so later runs reuse it (``HOOKRAILS_BENCH_FRESH=1`` makes it again). Each row is
timed on a read-only connection (what ``hookrails ledger query`` and ``ctx.ledger`` use):

* a view: ``SELECT * FROM <view> LIMIT 100``, the first page a person reads (an
  aggregate view computes every group before its first row, so this is its whole cost);
* a saved query, with a session from the middle of the file, tool ``Bash``, limit 50;
* ``/v1/stats``: every section of ``LedgerReader.stats(20)`` (what the server computes
  on a cache miss);
* the stop-block seed queries a Stop hook asks (``stop_blocks_in_a_row``,
  ``hook_blocks_in_a_row``).

``ROUNDS`` rounds, interleaved (every query once per round, in turn); the median and the
spread (min-max) in ms. ``plan`` says whether ``EXPLAIN QUERY PLAN`` has a full ``SCAN``
of a table or a ``TEMP B-TREE`` (sort or grouping); the target is every row at most
``TARGET_MS``.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from _timing import table
from gen_ledger import generate

from guardrails.ledger import migrations
from guardrails.ledger.query import saved_queries
from guardrails.ledger.reader import LedgerReader, connect_readonly
from guardrails.ledger.rollup import refresh_file

QUERY_CALLS = int(os.environ.get("HOOKRAILS_BENCH_CALLS", "1000000"))
ROUNDS = 3
TARGET_MS = 200.0


def big_ledger(calls: int = QUERY_CALLS) -> tuple[str, str]:
    """The path of a generated ledger of ``calls`` calls (made when missing), and how."""
    folder = os.path.join(tempfile.gettempdir(), "hookrails-bench-ledgers")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"ledger-v{migrations.latest_version()}-{calls}.db")
    if os.path.exists(path) and not os.environ.get("HOOKRAILS_BENCH_FRESH"):
        return path, "reused"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    made = generate(path + ".tmp", calls)
    t0 = time.perf_counter()
    folded = refresh_file(path + ".tmp")  # what a Ledger's closes and /v1/stats keep up
    made["rollup_refresh_s"] = round(time.perf_counter() - t0, 1)
    made["rollup_rows"] = folded
    os.replace(path + ".tmp", path)
    return path, f"generated: {made}"


def _plan(conn: Any, sql: str, params: Any) -> str:
    rows = conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()
    details = [r[3] for r in rows]
    scan = [d for d in details if d.startswith("SCAN") and " USING " not in d]
    scan = [d for d in scan if "CONSTANT ROW" not in d and not d.startswith("SCAN (")]
    temp = [d for d in details if "TEMP B-TREE" in d]
    out = []
    if scan:
        out.append("SCAN " + ",".join(sorted({d.split()[1] for d in scan})))
    if temp:
        out.append(f"{len(temp)} TEMP B-TREE")
    return "; ".join(out) or "indexed"


def _cases(path: str) -> list[tuple[str, str, Any]]:
    conn = connect_readonly(path)
    try:
        sid = conn.execute(
            "SELECT session_id FROM sessions ORDER BY session_id LIMIT 1 OFFSET "
            "(SELECT count(*) / 2 FROM sessions)"
        ).fetchone()[0]
        views = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'view'")]
    finally:
        conn.close()
    cases: list[tuple[str, str, Any]] = [
        (f"view {v}", f"SELECT * FROM {v} LIMIT 100", ()) for v in sorted(views)
    ]
    values = {"session": sid, "tool": "Bash", "limit": 50}
    for q in saved_queries():
        cases.append((f"saved {q.name}", q.sql, {p: values[p] for p in q.params}))
    return cases


def _time(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def _round(
    path: str, cases: list[tuple[str, str, Any]], sid: str, samples: dict[str, list[float]]
) -> None:
    """Every query once, on fresh connections."""
    conn = connect_readonly(path)
    reader = LedgerReader(path)
    try:
        for name, sql, params in cases:
            ms = _time(lambda sql=sql, params=params: conn.execute(sql, params).fetchall())
            samples.setdefault(name, []).append(ms)
        samples.setdefault("GET /v1/stats (LedgerReader.stats(20))", []).append(
            _time(lambda: [rows for _, rows in reader.stats(20)])
        )
        samples.setdefault("stop_blocks_in_a_row (Stop seed)", []).append(
            _time(lambda: reader.stop_blocks_in_a_row(sid, "Stop", None, 3))
        )
        samples.setdefault("hook_blocks_in_a_row (Stop seed)", []).append(
            _time(lambda: reader.hook_blocks_in_a_row(sid, "Stop", "stop_check", None, 3))
        )
    finally:
        reader.close()
        conn.close()


def ledger_queries() -> None:
    """Views, saved queries and /v1/stats on a 1M-call ledger (ms, median of rounds)."""
    print((__doc__ or "").split("\n\n", 1)[1].rstrip())
    print()
    path, how = big_ledger()
    print(f"ledger: {QUERY_CALLS:,} calls, schema v{migrations.latest_version()}, {how}\n")
    cases = _cases(path)
    conn = connect_readonly(path)
    plans = {name: _plan(conn, sql, params) for name, sql, params in cases}
    conn.close()
    sid = next(p["session"] for n, _, p in cases if n == "saved session_timeline")
    samples: dict[str, list[float]] = {}
    for _ in range(ROUNDS):
        _round(path, cases, sid, samples)
    rows = []
    over = []
    for name, ms in samples.items():
        med = statistics.median(ms)
        if med > TARGET_MS:
            over.append(name)
        rows.append([name, f"{med:,.1f}", f"{min(ms):,.1f}-{max(ms):,.1f}", plans.get(name, "")])
    print(table(["query", "median ms", "spread ms", "plan"], rows))
    verdict = "MET" if not over else f"NOT MET ({len(over)} over: {', '.join(over)})"
    print(f"\nTarget: every row at most {TARGET_MS:g} ms (reported, not asserted): {verdict}")
