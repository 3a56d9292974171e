"""The 60-second example: guard a few tool calls, print each decision, then read the ledger.

Run it with `python examples/quickstart.py` (`make demo` runs `hookrails demo`). No network, no key.
The ledger is `.hookrails/ledger.db` under the working directory.
"""

from __future__ import annotations

import asyncio
import subprocess

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger


def no_force_push(event, ctx):
    return HookResult.deny(
        "force-push is not allowed", hint="Push a new branch and open a pull request instead."
    )


def interactive_rm(event, ctx):
    """Rewrite `rm` into `rm -i`: the tool runs the new input."""
    command = event.tool_input["command"].replace("rm ", "rm -i ", 1)
    return HookResult.modify(input={"command": command})


def tests_before_deploy(event, ctx):
    """A sequence rule over the ledger: deploy only after run_tests succeeded in this session."""
    if not ctx.ledger.succeeded("run_tests", ctx.session_id):
        return HookResult.deny("deploy needs passing tests", hint="Call run_tests first.")
    return None


agent = AgentDefinition(
    name="researcher",
    tools={"bash": {"primary_arg": "command", "side_effects": True}, "deploy": {}},
    hooks={
        "PreToolUse": [
            HookMatcher(matcher="bash(git push --force*)", hooks=[no_force_push], priority=10),
            HookMatcher(matcher="bash(rm *)", hooks=[interactive_rm]),
            HookMatcher(matcher="bash(sudo *)", hooks=[{"use": "ask", "with": {"reason": "sudo"}}]),
            HookMatcher(matcher="deploy", hooks=[tests_before_deploy]),
        ],
    },
)


def bash(command: str) -> str:
    return subprocess.run(["echo", "would run:", command], capture_output=True, text=True).stdout


def run_tests() -> str:
    return "42 passed"


def deploy() -> str:
    return "deployed"


async def main() -> None:
    ledger = Ledger()
    guard = Guard(agent, ledger=ledger)  # no approver: `ask` is answered "deny" by run_tool
    session = guard.session()
    calls = [
        ("bash", {"command": "ls -la"}, bash),
        ("bash", {"command": "git push --force origin main"}, bash),
        ("bash", {"command": "rm notes.txt"}, bash),
        ("bash", {"command": "sudo reboot"}, bash),
        ("deploy", {}, deploy),
        ("run_tests", {}, run_tests),
        ("deploy", {}, deploy),
    ]
    for name, tool_input, fn in calls:
        run = await session.run_tool(name, tool_input, fn)
        call = f"{name}({', '.join(f'{k}={v!r}' for k, v in tool_input.items())})"
        print(f"{call:42} -> {run.status:7} {run.for_model().strip()}")

    print(f"\nledger: {ledger.path}")
    rows = ledger.reader.query(
        "select tool_name, status, count(*) as calls from tool_calls "
        "where session_id = ? group by 1, 2 order by 1, 2",
        [session.session_id],
    )
    for row in rows:
        print(f"  {row['tool_name']:10} {row['status']:8} {row['calls']}")
    query = "select tool_name, status, count(*) from tool_calls group by 1, 2"
    print(f'\nexplore it:\n  hookrails ledger query "{query}"\n  datasette {ledger.path}')


if __name__ == "__main__":
    asyncio.run(main())
