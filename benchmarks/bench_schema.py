"""Cost of ``schema_guardrail`` per call, against the bare precompiled jsonschema validator.

Each case is a Claude Code tool with its shipped schema (``schemas/tools``) and
one input. Columns (ns per call, median of repeats, see ``_timing``):

* ``bare``: ``Draft202012Validator(schema, format_checker=...)`` compiled
  once (with the hook's format checker, so ``uri`` is checked in both),
  then ``validator.is_valid(input)`` for valid input and
  ``list(validator.iter_errors(input))`` for invalid input: what plain
  jsonschema does to answer "is it valid" / "what is wrong".
* ``hook``: ``schema_guardrail(event, ctx)`` called directly with a real
  ``HookContext`` (one pre-built event): the schema lookup, the validation
  and, for invalid input, the full denial (every violation with its path,
  the fixes, the example, the annotations).
* ``emit_sync``: ``guard.emit_sync(event)`` with the hook bound to ``*``, for
  context (dispatch and merging included).

Target: the hook within 1.3x of the bare ``is_valid`` on valid input
(reported, not asserted). On invalid input the hook writes the message the
model reads; the bare column only collects the errors.
"""

from __future__ import annotations

from typing import Any

from _timing import compare, table

from guardrails import AgentDefinition, Guard, HookMatcher, PreToolUse
from guardrails.builtins import SchemaGuardrail
from guardrails.builtins.schema.formats import format_checker
from guardrails.builtins.schema.sources import builtin_schema

TARGET_RATIO = 1.3

VALID: list[tuple[str, dict[str, Any]]] = [
    ("Bash", {"command": "git status --short", "description": "Show working tree status"}),
    ("Write", {"file_path": "/home/user/project/notes.md", "content": "# Notes\n" * 40}),
    (
        "MultiEdit",
        {
            "file_path": "/home/user/project/app.py",
            "edits": [
                {"old_string": f"x{i} = 1", "new_string": f"x{i} = 2", "replace_all": i == 0}
                for i in range(4)
            ],
        },
    ),
    (
        "TodoWrite",
        {
            "todos": [
                {"content": f"Step {i}", "status": "pending", "activeForm": f"Doing step {i}"}
                for i in range(5)
            ]
        },
    ),
    ("WebFetch", {"url": "https://example.com/docs/install", "prompt": "Installation steps?"}),
]

INVALID: list[tuple[str, dict[str, Any]]] = [
    ("Write", {"file_path": 42, "contnt": "hello"}),
    (
        "MultiEdit",
        {"file_path": "/p/app.py", "edits": [{"old_string": 1, "new_sting": "b"}, {}]},
    ),
    ("Grep", {"pattern": "x", "output_mode": "lines", "-A": "3"}),
]


def _setup() -> tuple[Guard, SchemaGuardrail, Any]:
    hook = SchemaGuardrail()
    guard = Guard(AgentDefinition(name="bench", hooks={"PreToolUse": [HookMatcher(hooks=[hook])]}))
    session = guard.session("bench")
    binding = guard._index.all[0]
    return guard, hook, session.ctx(binding)


def _bare(tool: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(builtin_schema(tool), format_checker=format_checker())


def _event(tool: str, tool_input: dict[str, Any]) -> PreToolUse:
    return PreToolUse(
        tool_name=tool, tool_input=tool_input, session_id="bench", cwd="/tmp", tool_use_id="t"
    )


def _fmt(ns: float) -> str:
    return f"{ns:,.0f}"


def schema_guardrail_bench() -> None:
    """schema_guardrail per call vs the bare jsonschema validator"""
    print(__doc__.split("\n\n", 1)[1].rstrip() if __doc__ else "")
    print()
    guard, hook, ctx = _setup()
    rows = []
    verdicts = []
    for tool, tool_input in VALID:
        validator = _bare(tool)
        event = _event(tool, tool_input)
        assert validator.is_valid(tool_input) and hook(event, ctx) is None, tool
        assert guard.emit_sync(event).decision == "allow"

        def call(ev: Any, hook: Any = hook, ctx: Any = ctx) -> Any:
            return hook(ev, ctx)

        bare_ns, hook_ns, emit_ns = compare(
            [lambda ev, v=validator: v.is_valid(ev.tool_input), call, guard.emit_sync], event
        )
        ratio = hook_ns / bare_ns
        rows.append(
            [f"{tool} (valid)", _fmt(bare_ns), _fmt(hook_ns), f"{ratio:.2f}x", _fmt(emit_ns)]
        )
        verdicts.append(
            f"  {tool:<10} {ratio:.2f}x: {'MET' if ratio <= TARGET_RATIO else 'NOT MET'}"
        )
    for tool, tool_input in INVALID:
        validator = _bare(tool)
        event = _event(tool, tool_input)
        denial = hook(event, ctx)
        assert denial is not None and denial.decision == "deny", tool

        def call(ev: Any, hook: Any = hook, ctx: Any = ctx) -> Any:
            return hook(ev, ctx)

        bare_ns, hook_ns, emit_ns = compare(
            [lambda ev, v=validator: list(v.iter_errors(ev.tool_input)), call, guard.emit_sync],
            event,
        )
        errors = len(list(validator.iter_errors(tool_input)))
        rows.append(
            [
                f"{tool} (invalid, {errors} errors)",
                _fmt(bare_ns),
                _fmt(hook_ns),
                f"{hook_ns / bare_ns:.2f}x",
                _fmt(emit_ns),
            ]
        )
    headers = ["case", "bare ns", "hook ns", "hook/bare", "emit_sync ns"]
    print(table(headers, rows))
    print(
        f"\nTarget: the hook within {TARGET_RATIO:g}x the bare is_valid on valid input "
        "(reported, not asserted):"
    )
    print("\n".join(verdicts))


if __name__ == "__main__":
    schema_guardrail_bench()
