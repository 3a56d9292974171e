"""Deploy only after the tests passed: a sequence rule that reads the ledger.

The `tests_before_deploy` hook asks the ledger (``ctx.ledger``, read-only) whether
``run_tests`` finished ``ok`` earlier in this session. Until it has, ``deploy`` is
denied and never runs; a failed test run does not count, and another session
has to run its own tests.

Run it with `python examples/deploy_rule.py`. The ledger lives in a temporary folder.
"""

from __future__ import annotations

import os
import tempfile

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger


def tests_before_deploy(event, ctx):
    """Deny `deploy` unless `run_tests` succeeded earlier in this session."""
    if ctx.ledger is None:
        return HookResult.deny("deploy needs a ledger to check that the tests passed")
    if not ctx.ledger.succeeded("run_tests", ctx.session_id):
        return HookResult.deny(
            "deploy needs passing tests in this session",
            hint="Call run_tests first and fix any failure.",
        )
    return None


agent = AgentDefinition(
    name="release-bot",
    tools={"run_tests": {}, "deploy": {"side_effects": True}},
    hooks={"PreToolUse": [HookMatcher(matcher="deploy", hooks=[tests_before_deploy])]},
)


def run_tests(suite: str) -> str:
    if suite == "flaky":
        raise RuntimeError("3 failed, 39 passed")
    return "42 passed"


def deploy(target: str) -> str:
    return f"deployed to {target}"


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        ledger = Ledger(os.path.join(folder, "ledger.db"))
        guard = Guard(agent, ledger=ledger)
        steps = [
            ("release-1", "deploy", {"target": "prod"}, deploy),
            ("release-1", "run_tests", {"suite": "flaky"}, run_tests),
            ("release-1", "deploy", {"target": "prod"}, deploy),
            ("release-1", "run_tests", {"suite": "unit"}, run_tests),
            ("release-1", "deploy", {"target": "prod"}, deploy),
            ("release-2", "deploy", {"target": "prod"}, deploy),  # its own tests never ran
        ]
        for session_id, tool, args, fn in steps:
            run = guard.session(session_id).sync.run_tool(tool, args, fn)
            answer = run.for_model().splitlines()[0]
            print(f"{session_id}  {tool:9} -> {run.status:6} {answer}")
        ledger.close()


if __name__ == "__main__":
    main()
