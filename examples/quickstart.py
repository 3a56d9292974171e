"""The 60-second example: guard a few tool calls and print each decision.

Run it with `make demo` (or `python examples/quickstart.py`). No network, no key.
"""

from __future__ import annotations

import asyncio
import subprocess

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult


def no_force_push(event, ctx):
    return HookResult.deny(
        "force-push is not allowed", hint="Push a new branch and open a pull request instead."
    )


def quiet_rm(event, ctx):
    """Rewrite `rm` into an interactive-safe form: the tool runs the new input."""
    return HookResult.modify(
        input={"command": event.tool_input["command"].replace("rm ", "rm -i ", 1)}
    )


agent = AgentDefinition(
    name="researcher",
    tools={"bash": {"primary_arg": "command", "side_effects": True}},
    hooks={
        "PreToolUse": [
            HookMatcher(matcher="bash(git push --force*)", hooks=[no_force_push], priority=10),
            HookMatcher(matcher="bash(rm *)", hooks=[quiet_rm]),
            HookMatcher(matcher="bash(sudo *)", hooks=[{"use": "ask", "with": {"reason": "sudo"}}]),
        ],
        "Stop": [HookMatcher(hooks=[lambda event, ctx: None])],
    },
)


def bash(command: str) -> str:
    return subprocess.run(["echo", "would run:", command], capture_output=True, text=True).stdout


async def main() -> None:
    guard = Guard(agent)  # no approver: `ask` is answered "deny" by run_tool
    for command in ["ls -la", "git push --force origin main", "rm notes.txt", "sudo reboot"]:
        run = await guard.run_tool("bash", {"command": command}, bash)
        print(f"{command!r:36} -> {run.status:7} {run.for_model().strip()}")


if __name__ == "__main__":
    asyncio.run(main())
