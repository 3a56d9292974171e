"""Guard a LangChain v1 agent (`create_agent`) with `GuardrailsMiddleware`.

A real model needs OPENAI_API_KEY and `pip install langchain-openai` (any chat model
works: set HOOKRAILS_EXAMPLE_MODEL, e.g. `anthropic:claude-sonnet-4-5`, with that
provider's package and key). Without the key, or with --fake, a scripted chat model plays
the agent, offline:

    python examples/langchain_example.py          # a real model if OPENAI_API_KEY is set
    python examples/langchain_example.py --fake   # always offline

What the fake run shows: a call with the wrong arguments is denied with the schema's
instruction and an example (the tool never runs) and then corrected; `git push` is
rewritten to a dry run, and the dry run is what runs; `rm -rf` is denied; the agent is
sent back until it writes <promise>DONE</promise>. Then it reads the ledger (in a
temporary folder).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger
from guardrails.adapters.langchain import GuardrailsMiddleware
from guardrails.builtins import CompletionPromise, DenyCommands, schema_guardrail

WORKDIR = Path(tempfile.mkdtemp(prefix="hookrails-langchain-"))


def push_dry_run(event, ctx):
    """Rewrite `git push` into `git push --dry-run`: the tool runs the new input."""
    command = event.tool_input["command"]
    if "--dry-run" in command:
        return None
    return HookResult.modify(input={"command": command.replace("git push", "git push --dry-run")})


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
    },
    hooks={
        "PreToolUse": [
            HookMatcher(hooks=[schema_guardrail]),
            HookMatcher(matcher="bash", hooks=[DenyCommands(rules=["rm -rf *"])]),
            HookMatcher(matcher="bash(git push*)", hooks=[push_dry_run]),
        ],
        "AgentStop": [HookMatcher(hooks=[CompletionPromise("DONE", max_iterations=3)])],
    },
)


@tool
def bash(command: str) -> str:
    """Run a shell command (this example only says what it would run)."""
    return f"(would run) $ {command}"


def scripted_model():  # the offline stand-in for the LLM
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    class ScriptedChat(GenericFakeChatModel):
        def bind_tools(self, tools, **kwargs):
            return self

    def calls(*pairs):
        return AIMessage(
            content="",
            tool_calls=[{"name": "bash", "args": a, "id": f"call_{n}"} for n, a in pairs],
        )

    return ScriptedChat(
        messages=iter(
            [
                calls((1, {"cmd": "ls"})),  # wrong field name
                calls((2, {"command": "ls"}), (3, {"command": "git push origin main"})),
                calls((4, {"command": "rm -rf build"})),
                AIMessage("Pushed (dry run) and listed the files."),  # no promise: sent back
                AIMessage("Checked everything. <promise>DONE</promise>"),
            ]
        )
    )


def real_model():
    from langchain.chat_models import init_chat_model

    return init_chat_model(os.environ.get("HOOKRAILS_EXAMPLE_MODEL", "openai:gpt-4.1-mini"))


def main() -> None:
    fake = "--fake" in sys.argv or not os.environ.get("OPENAI_API_KEY")
    ledger = Ledger(WORKDIR / "ledger.db")
    guard = Guard(definition, ledger=ledger, cwd=str(WORKDIR))
    agent = create_agent(
        scripted_model() if fake else real_model(),
        tools=[bash],
        system_prompt="You tidy a git repository with the bash tool.",
        middleware=[GuardrailsMiddleware(guard)],
    )
    print(f"model: {'scripted (offline)' if fake else 'real'}\n")
    prompt = "List the files, push main, and clear the build folder."
    out = agent.invoke({"messages": [HumanMessage(prompt)]})

    calls = {}
    for message in out["messages"]:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                calls[call["id"]] = f"{call['name']}({call['args']})"
            if message.content:
                print(f"assistant: {message.content}")
        elif isinstance(message, ToolMessage):
            call = calls.get(message.tool_call_id, message.name)
            told = str(message.content).replace("\n", "\n     ")
            print(f"{call} [{message.status}]\n  -> {told}")
        elif isinstance(message, HumanMessage):
            print(f"user: {str(message.content)[:110]!r}")

    print(f"\nledger: {ledger.path}")
    for row in ledger.reader.query(
        "select tool_name, status, final_arguments, count(*) as calls from tool_calls "
        "group by 1, 2, 3 order by 1, 2, 3"
    ):
        print(f"  {row['tool_name']:6} {row['status']:8} {row['final_arguments']}")
    stops = ledger.reader.query("select decision from events where event = 'AgentStop' order by id")
    print(f"  stops: {', '.join(s['decision'] for s in stops)}")
    print(f"\nexplore it:\n  hookrails ledger tail --ledger {ledger.path}")


if __name__ == "__main__":
    main()
