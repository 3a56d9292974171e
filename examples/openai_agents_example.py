"""Guard an openai-agents agent: tool guardrails, the ledger, and a stop hook.

A real model needs OPENAI_API_KEY (and `pip install 'hookrails[openai]'`). Without the
key, or with --fake, the SDK's own scripted test model (`agents.testing.ScriptedModel`)
plays the agent, offline:

    python examples/openai_agents_example.py          # a real model if OPENAI_API_KEY is set
    python examples/openai_agents_example.py --fake   # always offline

What the fake run shows: a call with the wrong arguments is denied with the schema's
instruction and an example (the tool never runs) and then corrected; `rm -rf` is denied;
a write to `.env` is denied; the agent is sent back until it writes
<promise>DONE</promise>. Then it reads the ledger (in a temporary folder).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

from agents import Agent, RunConfig, function_tool

from guardrails import AgentDefinition, Guard, HookMatcher, Ledger
from guardrails.adapters.openai_agents import guard_tools, run
from guardrails.builtins import CompletionPromise, DenyCommands, ProtectPaths, schema_guardrail

WORKDIR = Path(tempfile.mkdtemp(prefix="hookrails-openai-"))

definition = AgentDefinition(
    name="ops",
    tools={
        "bash": {
            "primary_arg": "command",
            "schema": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
                "additionalProperties": False,
                "examples": [{"command": "ls -la"}],
            },
        },
        "write_file": {"primary_arg": "file_path", "side_effects": True},
    },
    hooks={
        "PreToolUse": [
            HookMatcher(hooks=[schema_guardrail]),
            HookMatcher(matcher="bash", hooks=[DenyCommands(rules=["rm -rf *"])]),
            HookMatcher(matcher="write_file", hooks=[ProtectPaths(paths=[".env*"])]),
        ],
        "AgentStop": [HookMatcher(hooks=[CompletionPromise("DONE", max_iterations=3)])],
    },
)


@function_tool
def bash(command: str) -> str:
    """Run a shell command (this example only says what it would run)."""
    return f"(would run) $ {command}"


@function_tool
def write_file(file_path: str, content: str) -> str:
    """Write a text file."""
    target = WORKDIR / file_path
    target.write_text(content, encoding="utf-8")
    return f"wrote {len(content)} bytes to {file_path}"


def scripted_model():  # the offline stand-in for the LLM
    from agents.testing import ScriptedModel, assistant_message, function_call

    def call(n, name, args):
        return function_call(name, args, call_id=f"call_{n}")

    return ScriptedModel(
        [
            [call(1, "bash", {"cmd": "ls"})],  # wrong field name
            [call(2, "bash", {"command": "ls"}), call(3, "bash", {"command": "rm -rf build"})],
            [
                call(4, "write_file", {"file_path": ".env", "content": "KEY=1\n"}),
                call(5, "write_file", {"file_path": "notes.md", "content": "all tidy\n"}),
            ],
            [assistant_message("Notes written.")],  # no promise yet: sent back
            [assistant_message("Notes written and checked. <promise>DONE</promise>")],
        ]
    )


async def main() -> None:
    fake = "--fake" in sys.argv or not os.environ.get("OPENAI_API_KEY")
    ledger = Ledger(WORKDIR / "ledger.db")
    guard = Guard(definition, ledger=ledger, cwd=str(WORKDIR))
    agent = Agent(
        name="ops",
        instructions="You tidy a project folder with the bash and write_file tools.",
        tools=guard_tools(guard, [bash, write_file]),
        **({"model": scripted_model()} if fake else {}),
    )
    print(f"model: {'scripted (offline)' if fake else 'OpenAI'}\n")
    result = await run(
        guard,
        agent,
        "List the files, clear the build folder and leave notes in notes.md.",
        run_config=RunConfig(tracing_disabled=fake),
    )

    calls = {}
    for item in result.to_input_list():
        if item.get("type") == "function_call":
            calls[item["call_id"]] = f"{item['name']}({item['arguments']})"
        elif item.get("type") == "function_call_output":
            told = str(item["output"]).replace("\n", "\n     ")
            print(f"{calls[item['call_id']]}\n  -> {told}")
        elif item.get("role") == "user":
            print(f"user: {json.dumps(item['content'])[:110]}")
    print(f"final: {result.final_output}\n")

    print(f"ledger: {ledger.path}")
    for row in ledger.reader.query(
        "select tool_name, status, count(*) as calls from tool_calls group by 1, 2 order by 1, 2"
    ):
        print(f"  {row['tool_name']:10} {row['status']:8} {row['calls']}")
    stops = ledger.reader.query("select decision from events where event = 'AgentStop' order by id")
    print(f"  stops: {', '.join(s['decision'] for s in stops)}")
    print(f"\nexplore it:\n  hookrails ledger tail --ledger {ledger.path}")


if __name__ == "__main__":
    asyncio.run(main())
