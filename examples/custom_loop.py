"""A plain agent loop guarded by examples/agent.yaml: no framework, just `run_tool`.

Run it: `python examples/custom_loop.py`. No key is needed: `scripted_model`
stands in for the LLM and answers from the transcript so far, the way a model
would (it corrects a call after a denial). To use a real model, replace
`scripted_model` with a call to your provider's API (that needs its key) and
turn its tool calls into `(name, input)` pairs.

The loop is the whole integration: each tool call goes through
`session.run_tool` (denied calls never run), the text the model reads back is
`run.for_model()`, and the stop goes through `session.agent_stop`.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from guardrails import AgentDefinition, Guard, Ledger

HERE = Path(__file__).parent


def bash(command: str, **_: object) -> str:
    """A stand-in shell: prints what it would run instead of running it."""
    return f"(would run) $ {command}"


def write(file_path: str, content: str) -> str:
    Path(file_path).write_text(content, encoding="utf-8")
    return f"wrote {len(content)} bytes to {file_path}"


TOOLS = {"Bash": bash, "Write": write}


def scripted_model(transcript: list[dict[str, str]], workdir: str) -> dict[str, object]:
    """The next step a model might take: a tool call, or a final answer."""
    script: list[dict[str, object]] = [
        {"tool": "Bash", "input": {"command": "git status"}},
        {"tool": "Bash", "input": {"command": "git push --force origin main"}},
        {"tool": "Write", "input": {"path": "notes.md", "text": "draft"}},  # wrong field names
        {"tool": "Write", "input": {"file_path": f"{workdir}/notes.md", "content": "draft\n"}},
        {"tool": "Write", "input": {"file_path": f"{workdir}/.env", "content": "KEY=1\n"}},
        {"answer": "Notes written; force-push refused as expected."},
    ]
    turns = sum(1 for m in transcript if m["role"] == "tool")
    return script[min(turns, len(script) - 1)]


def main() -> None:
    workdir = tempfile.mkdtemp(prefix="hookrails-loop-")
    agent = AgentDefinition.from_file(HERE / "agent.yaml")
    # this run's own file, not the one agent.yaml's `ledger:` names: an override on purpose
    ledger = Ledger(os.path.join(workdir, "ledger.db"), definition=agent)
    guard = Guard(agent, ledger=ledger, cwd=workdir)
    session = guard.session()
    transcript = [{"role": "user", "content": "Tidy the repo and leave notes."}]
    session.sync.user_prompt_submit(transcript[0]["content"])
    for _ in range(10):
        step = scripted_model(transcript, workdir)
        if "answer" in step:
            stop = session.sync.agent_stop(str(step["answer"]))
            print(f"stop -> {'blocked: ' + str(stop.reason) if stop.blocked else 'allowed'}")
            if not stop.blocked:
                break
            transcript.append({"role": "user", "content": stop.reason or ""})
            continue
        name, tool_input = str(step["tool"]), dict(step["input"])  # type: ignore[call-overload]
        run = session.run_tool_sync(name, tool_input, TOOLS[name])
        reply = run.for_model()
        print(f"{name} {tool_input} -> {run.status}\n    {reply.splitlines()[0]}")
        transcript.append({"role": "tool", "content": reply})
    rows = ledger.reader.query(
        "select tool_name, status, count(*) as n from tool_calls group by 1, 2 order by 1, 2"
    )
    print("\nledger:", ", ".join(f"{r['tool_name']} {r['status']} x{r['n']}" for r in rows))


if __name__ == "__main__":
    main()
