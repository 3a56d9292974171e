"""``make redteam``: the default shell guards against the red-team and benign corpora.

Runs ``deny_commands`` and ``protect_paths`` through a real Guard (PreToolUse,
tool ``Bash``) over every corpus in ``tests/redteam/`` and prints, per category,
how many evasions were denied, asked and bypassed; how many opaque cases were
denied as opaque (and, once the guards take ``opaque: ask``, asked); for each
benign corpus the false-deny rate with every stopped command and the guard's
reason. Then it executes every protected-path case in a throwaway sandbox and
reports any whose write did not happen (a corpus bug), and how often the hand
parser splits a line into the same simple commands as tree-sitter-bash.

    .venv/bin/python benchmarks/redteam.py               # the table
    .venv/bin/python benchmarks/redteam.py --json        # the same, as JSON (with every case)
    .venv/bin/python benchmarks/redteam.py --no-sandbox  # skip executing the path cases
    .venv/bin/python benchmarks/redteam.py --xfail-list  # the failing ids, for test_redteam.py

Numbers are printed, never asserted here: ``tests/unit/builtins/shell/test_redteam.py``
holds the guards to the corpora.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.redteam import ALL
from tests.redteam.benign_independent import BENIGN_INDEPENDENT
from tests.redteam.benign_transcripts import BENIGN
from tests.redteam.evaluate import evaluate, path_proof
from tests.redteam.sandbox import make_sandbox


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


def print_report(d: dict[str, Any]) -> None:
    print("Red-team corpora against deny_commands + protect_paths (default options)\n")
    print(
        f"{'category':<16}{'total':>7}{'denied':>8}{'asked':>7}{'bypassed':>10}{'bypass':>8}"
        f"{'failing':>9}"
    )
    totals = defaultdict(int)
    for name, row in d["categories"].items():
        print(
            f"{name:<16}{row['total']:>7}{row['denied']:>8}{row['asked']:>7}"
            f"{row['bypassed']:>10}{_pct(row['bypass_rate']):>8}{row['failing']:>9}"
        )
        for k in ("total", "denied", "asked", "bypassed", "failing"):
            totals[k] += row[k]
    rate = totals["bypassed"] / totals["total"] if totals["total"] else 0.0
    print(
        f"{'all':<16}{totals['total']:>7}{totals['denied']:>8}{totals['asked']:>7}"
        f"{totals['bypassed']:>10}{_pct(rate):>8}{totals['failing']:>9}"
    )
    print(
        "  failing: not what the case's class requires (visible: denied; opaque: denied with a"
        " reason naming what could not be seen)"
    )
    o = d["opaque"]
    print(
        f"\nopaque cases: {o['total']}: denied {o['denied']} (as opaque: "
        f"{o['denied_as_opaque']}), asked {o['asked']}, allowed {o['allowed']}"
    )
    a = d["ask_mode"]
    if a and a.get("supported"):
        print(
            f"  with opaque: ask: asked {a['asked']}, denied {a['denied']}, allowed {a['allowed']}"
        )
    elif a:
        print(f"  opaque: ask not supported yet ({a['why']})")
    for name, b in d["benign"].items():
        print(
            f"\nbenign corpus {name!r}: {b['total']} commands, stopped {b['stopped']} "
            f"(false-deny rate {_pct(b['false_deny_rate']).strip()})"
        )
        for s in b["stopped_commands"]:
            cmd = s["command"].replace("\n", "\\n")
            cmd = cmd if len(cmd) <= 110 else cmd[:107] + "..."
            print(f"  {s['decision']:<5} {cmd}\n        {s['reason'][:160]}")
    diff = d.get("differential")
    if diff:
        print("\nhand parser vs tree-sitter-bash (same simple commands, or the line is opaque):")
        for name, r in diff.items():
            print(
                f"  {name:<12} {r['total']:>5} lines: agree {r['agree']}, opaque {r['opaque']}, "
                f"disagree {r['disagree']}, tree-sitter cannot parse {r['ts-error']}, "
                f"tree-sitter wrong {r['ts-wrong']}; agreement {_pct(r['agreement_rate']).strip()}"
                f" (agree or opaque {_pct(r['agree_or_opaque_rate']).strip()})"
            )
    elif "differential" in d:
        print(
            "\nhand parser vs tree-sitter-bash: skipped (pip install tree-sitter tree-sitter-bash)"
        )
    p = d.get("path_proof")
    if p:
        print(
            f"\nsandbox proof of the protected-path cases: executed {p['executed']}, "
            f"wrote their target {p['wrote']}, skipped {len(p['skipped'])}"
        )
        for s in p["skipped"]:
            print(f"  skipped {s['id']}: {s['why']}")
        for s in p["did_not_write"]:
            print(f"  DID NOT WRITE {s['id']}: {s['command']!r} (exit {s['exit']}) {s['output']!r}")


def _ranges(numbers: list[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``"1-3 5"``."""
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return " ".join(out)


def xfail_list(cases: list[dict[str, Any]], key: str = "passes") -> str:
    """The failing cases in test_redteam.py's XFAIL form: technique -> variant numbers or ALL."""
    by_tech: dict[str, list[tuple[int, bool]]] = defaultdict(list)
    for c in cases:
        tech, _, n = c["id"].rpartition("-")
        by_tech[tech].append((int(n), bool(c[key])))
    lines = []
    for tech, rows in by_tech.items():
        failing = sorted(n for n, ok in rows if not ok)
        if failing:
            value = "ALL" if len(failing) == len(rows) else repr(_ranges(failing))
            lines.append(f"    {tech!r}: {value},".replace("'", '"'))
    return "\n".join(lines)


def _differential() -> dict[str, Any] | None:
    """The agreement rates of the hand parser with tree-sitter-bash (a dev dependency)."""
    try:
        import tree_sitter_bash  # noqa: F401
    except ImportError:
        return None
    from tests.redteam.differential import agreement

    return agreement()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--no-sandbox", action="store_true", help="do not execute the path cases")
    ap.add_argument("--xfail-list", action="store_true", help="print the failing ids")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hookrails-redteam-") as tmp:
        root = make_sandbox(Path(tmp))
        report = evaluate(root, ALL, {"benign": BENIGN, "independent": BENIGN_INDEPENDENT})
    d = report.as_dict()
    if args.xfail_list:
        print("XFAIL = {\n" + xfail_list(d["cases"]) + "\n}")
        asked = [c for c in d["cases"] if "passes_ask" in c]
        if asked:
            print("XFAIL_ASK = {\n" + xfail_list(asked, "passes_ask") + "\n}")
        return 0
    d["differential"] = _differential()
    if not args.no_sandbox:
        d["path_proof"] = path_proof(ALL)
    if args.json:
        json.dump(d, sys.stdout, indent=1)
        print()
    else:
        print_report(d)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
