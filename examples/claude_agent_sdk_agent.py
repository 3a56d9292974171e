"""Guard a claude-agent-sdk agent with a hookrails definition.

A real model needs ANTHROPIC_API_KEY (and `pip install 'hookrails[claude]'`). Without the
key, or with --fake, the real Claude Code CLI bundled in claude-agent-sdk runs against
hookrails' fake Messages API on 127.0.0.1 (`guardrails.testing.FakeMessagesAPI`), offline:

    python examples/claude_agent_sdk_agent.py          # a real model if ANTHROPIC_API_KEY is set
    python examples/claude_agent_sdk_agent.py --fake   # always offline, scripted model

The definition is the agent.yaml shape, built from a dict here (`AgentDefinition.from_file`
reads the same from a file). `to_sdk_hooks(guard)` turns it into `ClaudeAgentOptions.hooks`.
What the fake run shows: a valid call; a call of your own tool (an in-process MCP tool,
`mcp__notes__add_note`) with a misspelt argument, denied with the schema's instruction and
an example, then corrected; a force-push denied; a write to `.env` denied; the agent sent
back until it says <promise>DONE</promise>. Then the ledger, by SQL. The tools really run,
in a temporary folder.

`schema_guardrail` guards your own and MCP tools: Claude Code checks the input of its
built-in tools (Bash, Write, ...) itself, before any hook runs (docs/builtins.md).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

from guardrails import AgentDefinition, Guard, Ledger
from guardrails.adapters.claude_agent_sdk import to_sdk_hooks
from guardrails.testing import FakeMessagesAPI, MessagesRequest, tool_use

WORKDIR = Path(tempfile.mkdtemp(prefix="hookrails-claude-"))
TASK = (
    "In this folder: list the files, write notes.txt with one line, push the branch, "
    "and store the API token in .env. Say <promise>DONE</promise> when finished."
)

NOTE = "mcp__notes__add_note"  # Claude Code's name for the tool add_note of the server notes
NOTE_SCHEMA = {
    "type": "object",
    "properties": {"file": {"type": "string"}, "line": {"type": "string", "minLength": 1}},
    "required": ["file", "line"],
    "additionalProperties": False,
}


@tool("add_note", "Append one line to a notes file in the work folder", NOTE_SCHEMA)
async def add_note(args: dict[str, Any]) -> dict[str, Any]:
    path = WORKDIR / Path(args["file"]).name
    with path.open("a", encoding="utf-8") as fh:
        fh.write(args["line"] + "\n")
    return {"content": [{"type": "text", "text": f"added a line to {path.name}"}]}


# the agent.yaml shape: built-ins by name, `use`/`with` for configured ones
AGENT = {
    "name": "claude-worker",
    "tools": {
        "Bash": {"side_effects": True},
        "Write": {"side_effects": True},
        NOTE: {"side_effects": True, "schema": NOTE_SCHEMA},
    },
    "hooks": {
        "PreToolUse": [
            {"matcher": "mcp__notes__*", "priority": 10, "hooks": ["schema_guardrail"]},
            {
                "matcher": "Bash",
                "hooks": [{"use": "deny_commands", "with": {"rules": ["git push --force *"]}}],
            },
            {
                "matcher": "Write|Edit",
                "hooks": [{"use": "protect_paths", "with": {"paths": [".env*"]}}],
            },
        ],
        "PostToolUseFailure": [{"hooks": ["schema_nudge"]}],
        "Stop": [
            {
                "hooks": [
                    {"use": "completion_promise", "with": {"promise": "DONE", "max_iterations": 3}}
                ]
            }
        ],
    },
}


def fake_model(request: MessagesRequest) -> Any:
    """A scripted model that reacts to what it is shown, as a real one would."""
    last = request.last_text()
    steps = [
        tool_use("Bash", {"command": "ls -la", "description": "List files"}),
        tool_use(NOTE, {"file": "notes.txt", "text": "one line"}),  # "text": a misspelt "line"
    ]
    turn = request.turn
    if turn < len(steps):
        return steps[turn]
    if turn == 2 and "Example of a valid input" in last:
        return tool_use(NOTE, {"file": "notes.txt", "line": "one line"})  # corrected
    if turn == 3:
        return tool_use("Bash", {"command": "git push --force origin main"})
    if turn == 4:
        return tool_use("Write", {"file_path": str(WORKDIR / ".env"), "content": "TOKEN=x\n"})
    if "<promise>" in last or turn > 5:  # sent back by the stop hook
        return "Notes written; push and .env were refused. <promise>DONE</promise>"
    return "All finished."


def show(message: Any) -> None:
    if isinstance(message, AssistantMessage):
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                print(f"-> {block.name} {block.input}")
            elif isinstance(block, TextBlock):
                print(f"model: {block.text}")
    elif isinstance(message, UserMessage) and isinstance(message.content, list):
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                text = block.content if isinstance(block.content, str) else str(block.content)
                if block.is_error:  # the whole refusal: what the model is told to do
                    print("   refused: " + text.strip().replace("\n", "\n            "))
                else:
                    print(f"   ok: {(text.strip().splitlines() or [''])[0]}")
    elif isinstance(message, ResultMessage):
        print(f"session {message.session_id} ended: {message.subtype}")


async def run(fake: bool) -> Path:
    db = WORKDIR / "ledger.db"
    guard = Guard(AgentDefinition.from_dict(AGENT), ledger=Ledger(db))
    options = ClaudeAgentOptions(
        cwd=str(WORKDIR),
        hooks=to_sdk_hooks(guard),
        mcp_servers={"notes": create_sdk_mcp_server("notes", tools=[add_note])},
        allowed_tools=["Bash", "Write", NOTE],
        permission_mode="default",  # root may not bypass permissions; the tools are allowed
        setting_sources=[],  # only these hooks, no user or project settings
    )
    if not fake:
        async for message in query(prompt=TASK, options=options):
            show(message)
        return db
    with FakeMessagesAPI(fake_model) as api:
        options.env = api.env(WORKDIR / ".home")  # the CLI talks only to the fake API
        async for message in query(prompt=TASK, options=options):
            show(message)
    return db


def summary(db: Path) -> None:
    conn = sqlite3.connect(db)
    print("\nledger (tool_calls):")
    sql = "SELECT tool_name, status, count(*) FROM tool_calls GROUP BY 1, 2 ORDER BY 1, 2"
    for name, status, n in conn.execute(sql):
        print(f"  {name:21} {status:7} x{n}")
    stops = conn.execute("SELECT decision FROM events WHERE event = 'AgentStop' ORDER BY id")
    print("  stops: " + ", ".join(d for (d,) in stops))
    conn.close()
    print(f'\nexplore: hookrails ledger query --ledger {db} "select * from tool_calls"')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fake", action="store_true", help="scripted model, offline")
    args = parser.parse_args()
    fake = args.fake or not os.environ.get("ANTHROPIC_API_KEY")
    print(f"model: {'scripted (offline)' if fake else 'Claude (ANTHROPIC_API_KEY)'}")
    print(f"workdir: {WORKDIR}")
    summary(asyncio.run(run(fake)))


if __name__ == "__main__":
    main()
