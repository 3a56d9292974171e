"""Tool inputs released Claude Code versions sent, each with where it comes from.

The shipped schemas (``schemas/tools/*.json``) must accept every one of them: a
guardrail that denies what a released CLI sends denies real calls, and ``hookrails
replay`` of an older transcript reports denials that never happened.

Two kinds of source:

* ``transcript``: a ``tool_use`` input from a real session transcript or API request
  body in a public repository (``owner/repo@commit path``, the CLI ``version`` the
  record carries, the ``tool_use`` id). Long strings are shortened; field names, types
  and shapes are as recorded.
* ``schema``: an input built to the input schema that release of
  ``@anthropic-ai/claude-code`` gave the model, captured by running that release
  offline against :class:`~guardrails.testing.FakeMessagesAPI` (the tools of its
  first Messages API request); for 2.1.144, ``oneryalcin/agent-schemas`` captured it.
  Each shows the fields that release added or renamed. 2.1.332 is the CLI bundled in
  claude-agent-sdk: ``tests/e2e/test_claude_tool_schemas.py`` reads its schemas live.

``INVALID`` is what no release accepted: the relaxed schemas must still deny it.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Seen(NamedTuple):
    tool: str
    version: str
    input: dict[str, Any]
    source: str


_RAVEN = "RavenStorm-bit/claude-code-api-logger@57bad8e full-requests-clean.md (API request bodies)"
_AMAC = "amac0/ClaudeStatus@8cda50c"
_DRM = "DRMacIver/claude-reliability@4e49f16 snapshot-tests/tests"
_PORT = f"{_DRM}/python-to-rust-port/transcript.jsonl"
_AGENT_SCHEMAS = "oneryalcin/agent-schemas@dfa9f8f claude-code/captured/tools_2.1.144.json"


def _npm(version: str) -> str:
    return f"schema: @anthropic-ai/claude-code {version}, captured offline"


SEEN: list[Seen] = [
    # --- 0.2.x: Grep's include, Read's numbers ------------------------------------------
    Seen("Grep", "0.2.107", {"include": "*.js", "path": "/root/claude-code",
         "pattern": "log|console\\.|debug|verbose"}, f"transcript: {_RAVEN}"),
    Seen("Read", "0.2.107", {"file_path": "/root/claude-code/cli_proxy.js", "limit": 100,
         "offset": 1}, f"transcript: {_RAVEN}"),
    # --- 1.0.0: the fields 1.0.25 renamed -----------------------------------------------
    Seen("Edit", "1.0.0", {"file_path": "/p/app.py", "old_string": "a = 1", "new_string": "a = 2",
         "expected_replacements": 2}, _npm("1.0.0")),
    Seen("MultiEdit", "1.0.0", {"file_path": "/p/app.py", "edits": [
         {"old_string": "a", "new_string": "b", "expected_replacements": 3},
         {"old_string": "c", "new_string": "d"}]}, _npm("1.0.0")),
    Seen("NotebookEdit", "1.0.0", {"notebook_path": "/p/n.ipynb", "cell_number": 0,
         "new_source": "print(1)", "cell_type": "code", "edit_mode": "replace"}, _npm("1.0.0")),
    Seen("Task", "1.0.0", {"description": "Find the parser", "prompt": "Where is X parsed?"},
         _npm("1.0.0")),
    Seen("TodoWrite", "1.0.0", {"todos": [{"content": "Run the tests", "status": "pending",
         "priority": "medium", "id": "1"}]}, _npm("1.0.0")),
    # --- 1.0.31: a real session (ClaudeStatus example.jsonl, example2.jsonl) ---------------
    Seen("TodoWrite", "1.0.31", {"todos": [
         {"id": "1", "content": "Explore codebase structure and identify key files",
          "status": "in_progress", "priority": "high"},
         {"id": "3", "content": "Analyze code architecture and patterns", "status": "pending",
          "priority": "medium"}]},
         f"transcript: {_AMAC} example.jsonl, toolu_01YCLHB2LxiwM6zyCn57MsAY"),
    Seen("Glob", "1.0.31", {"pattern": "**/*.py"},
         f"transcript: {_AMAC} example.jsonl, toolu_01CbKN2ikhcMbEdf2scPcx34"),
    Seen("Read", "1.0.31", {"file_path": "/var/home/a/Code/ClaudeStatus/pyproject.toml"},
         f"transcript: {_AMAC} example.jsonl, toolu_01SQT4P6ZH2mtwzcwMPjrSdG"),
    Seen("Write", "1.0.31", {"file_path": "/var/home/a/Code/ClaudeStatus/CLAUDE.md",
         "content": "# CLAUDE.md\n"}, f"transcript: {_AMAC} example.jsonl"),
    Seen("Bash", "1.0.31", {"command": "git status", "description": "Check current git status"},
         f"transcript: {_AMAC} example2.jsonl, toolu_016yjvv6Uc9zgRcUdU4yBuiA"),
    Seen("Edit", "1.0.31", {"file_path": "/var/home/a/Code/ClaudeStatus/src/jsonl_parser.py",
         "old_string": "# ABOUTME: Parser", "new_string": "# ABOUTME: A parser"},
         f"transcript: {_AMAC} example2.jsonl, toolu_01PXnf3JhkYdJW15G6oC8Qxs"),
    # --- 1.0.51 to 1.0.80: ripgrep's options, run_in_background, todos with ids only -----
    Seen("Grep", "1.0.51", {"pattern": "def main", "glob": "*.py", "output_mode": "content",
         "-n": True, "-A": 2, "head_limit": 20, "multiline": False}, _npm("1.0.51")),
    Seen("Task", "1.0.65", {"description": "Review the diff", "prompt": "Review it.",
         "subagent_type": "general-purpose"}, _npm("1.0.65")),
    Seen("TodoWrite", "1.0.80", {"todos": [{"content": "Run the tests", "status": "in_progress",
         "id": "t1"}]}, _npm("1.0.80")),
    Seen("Bash", "1.0.80", {"command": "npm run dev", "run_in_background": True,
         "timeout": 120000}, _npm("1.0.80")),
    # --- 1.0.110 to 2.0.x: activeForm, the sandbox, Task's model and resume --------------
    Seen("TodoWrite", "1.0.110", {"todos": [{"content": "Run the tests", "status": "pending",
         "activeForm": "Running the tests"}]}, _npm("1.0.110")),
    Seen("Bash", "2.0.76", {"command": "make", "dangerouslyDisableSandbox": True,
         "description": "Build"}, _npm("2.0.76")),
    Seen("Grep", "2.0.76", {"pattern": "TODO", "output_mode": "content", "head_limit": 10,
         "offset": 10}, _npm("2.0.76")),
    Seen("Task", "2.0.76", {"description": "Continue the audit", "prompt": "Go on.",
         "subagent_type": "general-purpose", "model": "haiku", "resume": "a1b2c3",
         "run_in_background": True}, _npm("2.0.76")),
    # --- 2.1.14: a real session (claude-reliability snapshot tests) -------------------------
    Seen("Task", "2.1.14", {"description": "Explore Python project structure",
         "prompt": "Explore this Python project thoroughly.", "subagent_type": "Explore"},
         f"transcript: {_PORT}, toolu_01PKfvC84zTHnFnxjuoazGo5"),
    Seen("TodoWrite", "2.1.14", {"todos": [
         {"content": "Initialize Rust library project structure", "status": "in_progress",
          "activeForm": "Initializing Rust library project"},
         {"content": "Port string_utils module", "status": "pending",
          "activeForm": "Porting string_utils module"}]},
         f"transcript: {_PORT}, toolu_01MC72xBD7DmCZu9RZ4cuN9x"),
    Seen("Edit", "2.1.14", {"replace_all": False, "file_path": "/tmp/tmpw6sk2trg/src/math_utils.py",
         "old_string": "def add_numbers(a: int, b: int) -> int:",
         "new_string": "def add_numbers(a: int, b: int) -> int:  # sum"},
         f"transcript: {_DRM}/coverage-test-fix/transcript.jsonl, toolu_012DTETgq8s6o9MajSCMmNJX"),
    Seen("Bash", "2.1.14", {"command": "cargo init --lib --name python_utils",
         "description": "Initialize Rust library project"},
         f"transcript: {_PORT}, toolu_01FJm2pfkgbd2B9BeDDL9NVB"),
    Seen("Glob", "2.1.14", {"pattern": "**/*.py"},
         f"transcript: {_DRM}/coverage-test-fix/transcript.jsonl, toolu_0173gGuN8G4FkjzEPrXPe2ea"),
    Seen("Read", "2.1.14", {"file_path": "/tmp/tmpqwh7888i/Cargo.toml"},
         f"transcript: {_PORT}, toolu_014e4458sg2YXf5eeikCLiBZ"),
    Seen("Write", "2.1.14", {"file_path": "/tmp/tmp74wiyiny/hello.sh",
         "content": "#!/bin/bash\necho \"Hello world\"\n"},
         f"transcript: {_DRM}/hello-world-script/transcript.jsonl, toolu_01R3SZZYuAq6mou5RqHE4rzF"),
    # --- 2.1.30 to 2.1.144: PDFs, max_turns, the Agent name and its team fields -----------
    Seen("Read", "2.1.30", {"file_path": "/p/paper.pdf", "pages": "1-5"}, _npm("2.1.30")),
    Seen("Task", "2.1.30", {"description": "Warm up", "prompt": "Say hi.",
         "subagent_type": "general-purpose", "max_turns": 1}, _npm("2.1.30")),
    Seen("Grep", "2.1.30", {"pattern": "class ", "context": 3, "-i": True, "type": "py"},
         _npm("2.1.30")),
    Seen("Agent", "2.1.144", {"description": "Plan the change", "prompt": "Plan it.",
         "subagent_type": "Plan", "name": "planner", "team_name": "core", "mode": "plan",
         "isolation": "worktree", "model": "opus"}, f"schema: {_AGENT_SCHEMAS}"),
    Seen("Grep", "2.1.144", {"pattern": "TODO", "-o": True, "output_mode": "content"},
         f"schema: {_AGENT_SCHEMAS}"),
    # --- 2.1.332 (bundled in claude-agent-sdk 0.2.189) ------------------------------------
    Seen("Read", "2.1.332", {"file_path": "/p/big.log", "allow_large": True},
         "schema: the CLI bundled in claude-agent-sdk 0.2.189"),
    Seen("WebFetch", "2.1.332", {"url": "https://example.com/a", "prompt": "Sum up",
         "offset": 20000}, "schema: the CLI bundled in claude-agent-sdk 0.2.189"),
    Seen("Agent", "2.1.332", {"description": "Search remotely", "prompt": "Find it.",
         "model": "fable", "effort": "xhigh", "isolation": "remote",
         "run_in_background": False}, "schema: the CLI bundled in claude-agent-sdk 0.2.189"),
    Seen("Bash", "2.1.332", {"command": "make test", "run_in_background": True,
         "timeout": 3600000}, "schema: the CLI bundled in claude-agent-sdk 0.2.189 (a "
         "background command may run 7200000 ms)"),
    Seen("NotebookEdit", "2.1.332", {"notebook_path": "/p/n.ipynb", "cell_id": "a1",
         "new_source": "", "edit_mode": "delete"},
         "schema: the CLI bundled in claude-agent-sdk 0.2.189"),
    Seen("WebSearch", "2.1.332", {"query": "python 3.13", "allowed_domains": ["python.org"]},
         "schema: the CLI bundled in claude-agent-sdk 0.2.189"),
]  # fmt: skip


#: (tool, input, the path the denial names): what no release accepted
INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("TodoWrite", {"todos": [{"content": "a", "status": "pending"}]}, "$.todos[0]"),
    ("TodoWrite", {"todos": [{"content": "a", "status": "done", "activeForm": "A"}]},
     "$.todos[0]"),
    ("TodoWrite", {"todos": [{"content": "a", "status": "pending", "activeForm": "A",
                              "id": "1"}]}, "$.todos[0]"),
    ("TodoWrite", {"todos": [{"content": "a", "status": "pending", "priority": "urgent",
                              "id": "1"}]}, "$.todos[0]"),
    ("TodoWrite", {"todos": [{"content": "", "status": "pending", "activeForm": "A"}]},
     "$.todos[0]"),
    ("Edit", {"file_path": "/a", "old_string": "a", "new_string": "b", "replace_all": True,
              "expected_replacements": 2}, "$.replace_all"),
    ("Edit", {"file_path": "/a", "old_string": "a", "new_string": "b",
              "expected_replacements": 0}, "$.expected_replacements"),
    ("MultiEdit", {"file_path": "/a", "edits": [{"old_string": "a", "new_string": "b",
                   "replace_all": False, "expected_replacements": 1}]},
     "$.edits[0].replace_all"),
    ("NotebookEdit", {"notebook_path": "/n.ipynb", "new_source": "x", "cell_id": "a",
                      "cell_number": 1}, "$.cell_number"),
    ("NotebookEdit", {"notebook_path": "/n.ipynb", "new_source": "x", "cell_number": -1},
     "$.cell_number"),
    ("Grep", {"pattern": "x", "include": "*.js", "glob": "*.js"}, "$.glob"),
    ("Grep", {"pattern": "x", "-A": -1}, '$["-A"]'),
    ("Bash", {"command": "ls", "timeout": -5}, "$.timeout"),
    ("Bash", {"command": "ls", "_simulatedSedEdit": {"filePath": "/a", "newContent": "x"}},
     "$._simulatedSedEdit"),
    ("Bash", {"command": ""}, "$.command"),
    ("Agent", {"description": "d", "prompt": "p", "model": "gpt-4"}, "$.model"),
    ("Agent", {"description": "d", "prompt": "p", "max_turns": 0}, "$.max_turns"),
    ("Task", {"description": "d", "prompt": "p", "effort": "extreme"}, "$.effort"),
    ("Read", {"file_path": "/a", "allow_large": "yes"}, "$.allow_large"),
    ("Read", {"file_path": "/a", "limit": 0}, "$.limit"),
    ("WebFetch", {"url": "https://e.com", "prompt": "p", "offset": -1}, "$.offset"),
    ("Write", {"file_path": "/a"}, "$.content"),
    ("Glob", {"pattern": "*", "ignore": ["x"]}, "$.ignore"),
]  # fmt: skip
