"""Run one documentation snippet with a fake model standing in for the one it needs.

    python -m tests.e2e._docs_fakes SNIPPET.py NEED [NEED ...]

A snippet that talks to a model says so in a visible comment, e.g.
``# needs: export ANTHROPIC_API_KEY=…``. The docs test then runs it here, in its
own process, with the project's fakes instead of the provider:

- ``ANTHROPIC_API_KEY``: the real Claude Code CLI (bundled in claude-agent-sdk) talks
  to :class:`guardrails.testing.FakeMessagesAPI` on 127.0.0.1;
- ``OPENAI_API_KEY``: openai-agents gets the SDK's own ``ScriptedModel`` from its
  model provider, and LangChain's ``init_chat_model`` a scripted chat model.

Every fake plays the same turn: the model asks to force-push (``git push --force
origin main``) with the host's shell tool, then says "Done.". The pages' definitions
deny that push, so a snippet that guards what it claims to leaves a denied call in
the ledger. What happened is written as JSON to ``$DOCS_FAKES_REPORT``: how many
requests the model answered, and the ledger's denied calls before and after.
"""

from __future__ import annotations

import json
import os
import runpy
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

FORCE_PUSH = {"command": "git push --force origin main"}
LEDGER = Path(".hookrails") / "ledger.db"


def _claude() -> Callable[[], int]:
    from guardrails.testing import FakeMessagesAPI, MessagesRequest, tool_use

    def model(request: MessagesRequest) -> Any:
        return tool_use("Bash", FORCE_PUSH) if request.turn == 0 else "Done."

    api = FakeMessagesAPI(model).start()
    os.environ.update(api.env(tempfile.mkdtemp(prefix="docs-claude-home-")))
    return lambda: len(api.requests)


def _openai_agents() -> Callable[[], int]:
    from agents.models.multi_provider import MultiProvider
    from agents.testing import ScriptedModel, assistant_message, function_call

    os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"  # no key: nothing to export traces with
    model = ScriptedModel(
        [[function_call("bash", FORCE_PUSH, call_id="call_1")], [assistant_message("Done.")]]
    )
    MultiProvider.get_model = lambda self, name: model  # type: ignore[method-assign,assignment]
    return lambda: len(model.calls)


def _langchain() -> Callable[[], int]:
    import langchain.agents.factory
    import langchain.chat_models
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    class ScriptedChat(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:  # type: ignore[override]
            return self

    made: list[ScriptedChat] = []
    replies = [
        AIMessage(content="", tool_calls=[{"name": "bash", "args": FORCE_PUSH, "id": "call_1"}]),
        AIMessage("Done."),
    ]

    def init_chat_model(model: str | None = None, **kwargs: Any) -> ScriptedChat:
        made.append(ScriptedChat(messages=iter(replies)))
        return made[-1]

    langchain.chat_models.init_chat_model = init_chat_model  # type: ignore[assignment]
    langchain.agents.factory.init_chat_model = init_chat_model  # type: ignore[assignment]
    return lambda: sum(len(replies) - len(list(m.messages)) for m in made)


def _denied() -> int:
    if not LEDGER.is_file():
        return 0
    conn = sqlite3.connect(f"file:{LEDGER}?mode=ro", uri=True)
    try:
        row = conn.execute("select count(*) from tool_calls where status = 'denied'").fetchone()
        return int(row[0])
    finally:
        conn.close()


def fakes_for(needs: list[str], source: str) -> list[Callable[[], int]]:
    """The fakes ``needs`` asks for; an unknown need is an error, never ignored."""
    counters = []
    for need in needs:
        if "ANTHROPIC_API_KEY" in need:
            counters.append(_claude())
        elif "OPENAI_API_KEY" in need:
            if "from agents" in source:
                counters.append(_openai_agents())
            if "langchain" in source:
                counters.append(_langchain())
        elif need.startswith("pip install"):
            continue  # the extras are in the dev environment; the fakes stand in for the rest
        else:
            raise SystemExit(f"docs fakes: no fake for the need {need!r}")
    return counters


def main(argv: list[str]) -> None:
    script, needs = argv[0], argv[1:]
    source = Path(script).read_text(encoding="utf-8")
    counters = fakes_for(needs, source)
    before = _denied()
    runpy.run_path(script, run_name="__main__")
    report = {
        "model_requests": sum(count() for count in counters),
        "denied_before": before,
        "denied_after": _denied(),
    }
    Path(os.environ["DOCS_FAKES_REPORT"]).write_text(json.dumps(report), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
