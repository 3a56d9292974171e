"""Every code block in README.md and docs/*.md runs as written, in page order.

Each page gets a fresh folder holding a copy of ``examples/`` and ``schemas/`` (the
root of a clone, as a reader has it), and its blocks run there one after another,
``hookrails`` on the PATH:

- ``python``: run with this interpreter; a block whose first line is ``# file: NAME``
  is saved as NAME first (``test_*.py`` then runs under pytest);
- ``sh``/``bash``/``shell``: run with ``bash -e -o pipefail``; ``console``: its ``$ `` lines;
- ``yaml``/``toml``: saved (as its ``# file: NAME``, if it says) and ``hookrails check``-ed,
  which must not warn;
- ``json``: parsed; with ``<!-- doctest: subset-of PATH -->`` before it, it must be
  contained in that file as the blocks before it left it, else it is a definition
  and is checked;
- ``text``: what a command prints, shown to the reader, not run.

A block that needs setup says so on a ``# needs: …`` line of its own, and the test
supplies it: a fake model for an API key (``tests/e2e/_docs_fakes.py``), a recorded
transcript for a transcript. ``<!-- doctest: skip REASON -->`` before a block skips
it; there are at most ``MAX_SKIPS`` of them, each with its reason.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests._paths import FIXTURES_DIR, REPO

#: every block runs hookrails and Python processes: the full suite runs them, the fast tier not
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUN = {"python", "sh", "bash", "console", "shell"}
CHECK = {"yaml", "toml", "json"}
SHOWN = {"text"}
#: raising this is a review decision: a skipped block is documentation nobody runs
MAX_SKIPS = 3
BLOCK_TIMEOUT = 180
TRANSCRIPT = FIXTURES_DIR / "transcripts" / "realistic" / "4f6c2a1e-8b3d-4c5e-9a7f-1d2e3f4a5b6c"
#: variables of the developer's shell that would point a snippet at real services or files
SCRUBBED = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "HOOKRAILS_LEDGER",
    "HOOKRAILS_TOKEN",
    "CLAUDE_CONFIG_DIR",
    "CLAUDECODE",
    "PYTHONPATH",
)
_FENCE = re.compile(r"^( *)```([\w-]*)\s*$")
_DIRECTIVE = re.compile(r"^<!-- doctest: (skip|subset-of) ?(.*?) ?-->$")


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    text: str
    skip: str | None = None
    subset_of: str | None = None

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO).as_posix()}:{self.line}-{self.lang}"

    @property
    def file(self) -> str | None:
        """The file the block asks to be saved as (``# file: NAME`` on its first line)."""
        first = self.text.splitlines()[0] if self.text else ""
        match = re.fullmatch(r"#\s*file:\s*(\S+)(\s.*)?", first.strip())
        return match.group(1) if match else None

    @property
    def needs(self) -> list[str]:
        """Each item of its ``# needs: a; b`` lines."""
        items: list[str] = []
        for line in self.text.splitlines():
            match = re.fullmatch(r"#\s*needs:\s*(.+)", line.strip())
            if match:
                items += [i.strip() for i in match.group(1).split(";") if i.strip()]
        return items


def parse(page: Path) -> list[Block]:
    """The fenced blocks of ``page``, with the directive just before each (if any)."""
    blocks: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        start, body, indent = i, [], len(match.group(1))  # a block in a list is indented
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][indent:])
            i += 1
        block = Block(page, start + 1, match.group(2), "\n".join(body) + "\n")
        before = next((ln.strip() for ln in reversed(lines[:start]) if ln.strip()), "")
        directive = _DIRECTIVE.match(before)
        if directive and directive.group(1) == "skip":
            block.skip = directive.group(2)
        elif directive:
            block.subset_of = directive.group(2)
        blocks.append(block)
        i += 1
    return blocks


BLOCKS = [b for page in PAGES for b in parse(page)]


def _env(workdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["HOOKRAILS_CACHE_DIR"] = str(workdir / ".cache")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT
    )


#: a block that starts ``hookrails serve`` in the background, on its default address
_SERVES = re.compile(r"^hookrails serve .*&", re.M)


@contextlib.contextmanager
def _serving(block: Block) -> Iterator[None]:
    """One block at a time starts a server on 127.0.0.1:8787, whichever xdist worker runs
    it (hosts.md and ledger.md each have one, and the workers run them at once): the
    others wait on a lock file in the temp folder."""
    if not _SERVES.search(block.text):
        yield
        return
    import fcntl
    import tempfile

    with open(os.path.join(tempfile.gettempdir(), "hookrails-docs-8787.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _contains(whole: Any, part: Any) -> bool:
    """``part`` is ``whole`` with some dict keys (at any depth) left out."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(
            k in whole and _contains(whole[k], v) for k, v in part.items()
        )
    if isinstance(part, list):
        return (
            isinstance(whole, list)
            and len(part) == len(whole)
            and all(_contains(w, p) for w, p in zip(whole, part, strict=True))
        )
    return bool(whole == part)


@dataclass
class Workspace:
    """One page's folder; its blocks run once each, in page order."""

    root: Path
    done: dict[int, str | None] = field(default_factory=dict)
    #: the test cluster, for blocks that need a PostgreSQL server or ledger
    postgres: Any = None

    def __post_init__(self) -> None:
        for folder in ("examples", "schemas"):
            shutil.copytree(REPO / folder, self.root / folder)

    def outcome(self, blocks: list[Block], index: int) -> str | None:
        """None when block ``index`` ran as documented, else what went wrong."""
        for i in range(index + 1):
            if i not in self.done:
                self.done[i] = self._run_block(blocks[i], i)
        return self.done[index]

    def _run_block(self, block: Block, index: int) -> str | None:
        if block.skip is not None or block.lang in SHOWN:
            return None
        env = _env(self.root)
        for need in block.needs:
            if "PostgreSQL" in need:
                env.update(_postgres_env(self.postgres, server="server" in need))
            if "transcript" in need:
                shutil.copy(TRANSCRIPT.with_suffix(".jsonl"), self.root / "session.jsonl")
                shutil.copytree(TRANSCRIPT, self.root / "session", dirs_exist_ok=True)
        name = block.file or f"_doc_block_{index}.{_suffix(block.lang)}"
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_commands(block) if block.lang == "console" else block.text, "utf-8")
        if block.lang == "python":
            return self._python(block, name, env)
        if block.lang in RUN:
            with _serving(block):
                return _failed(_run(["bash", "-e", "-o", "pipefail", name], self.root, env))
        if block.lang == "json":
            data = json.loads(block.text)
            if block.subset_of is not None:
                whole = json.loads((self.root / block.subset_of).read_text(encoding="utf-8"))
                if not _contains(whole, data):
                    return f"not in {block.subset_of} as written there:\n{json.dumps(whole)}"
                return None
        proc = _run(["hookrails", "check", name], self.root, env)
        if "warning" in proc.stderr:
            return f"`hookrails check` warns:\n{proc.stderr}"
        return _failed(proc)

    def _python(self, block: Block, name: str, env: dict[str, str]) -> str | None:
        if Path(name).name.startswith("test_"):
            proc = _run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", name],
                self.root,
                env,
            )
            return _failed(proc)
        models = [n for n in block.needs if not n.startswith("pip install")]
        if not models:
            return _failed(_run([sys.executable, name], self.root, env))
        report = self.root / ".docs_fakes.json"
        env = {**env, "PYTHONPATH": str(REPO), "DOCS_FAKES_REPORT": str(report)}
        proc = _run(
            [sys.executable, "-m", "tests.e2e._docs_fakes", name, *block.needs], self.root, env
        )
        if (failed := _failed(proc)) is not None:
            return failed
        seen = json.loads(report.read_text(encoding="utf-8"))
        if seen["model_requests"] < 1:
            return f"the snippet never asked the fake model anything: {seen}"
        if seen["denied_after"] <= seen["denied_before"]:
            return f"the fake model's force-push was not denied (nothing guarded): {seen}"
        return None


def _postgres_env(cluster: Any, *, server: bool) -> dict[str, str]:
    """``# needs: a PostgreSQL server``: ``PGHOST``/``PGPORT``/``PGUSER`` name the test
    cluster's administrator and its ``psql``/``createdb`` are on the ``PATH``; ``… ledger``:
    ``HOOKRAILS_LEDGER`` is the URL of a new database on it."""
    if not server:
        return {"HOOKRAILS_LEDGER": cluster.create_database(f"docs_{os.getpid()}_{id(cluster)}")}
    path = f"{cluster.bindir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}"
    return {
        "PGHOST": "127.0.0.1",
        "PGPORT": str(cluster.port),
        "PGUSER": cluster.user,
        "PATH": path + os.environ.get("PATH", ""),
    }


def _commands(block: Block) -> str:
    """A console block's commands: its ``$ `` lines (and their ``\\`` continuations)."""
    commands, more = [], False
    for line in block.text.splitlines():
        if more or line.startswith("$ "):
            commands.append(line if more else line[2:])
            more = line.endswith("\\")
    return "\n".join(commands) + "\n"


def _suffix(lang: str) -> str:
    return {"python": "py", "yaml": "yaml", "toml": "toml", "json": "json"}.get(lang, "sh")


def _failed(proc: subprocess.CompletedProcess[str]) -> str | None:
    if proc.returncode == 0:
        return None
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Workspace]:
    return {page: Workspace(tmp_path_factory.mktemp(page.stem)) for page in PAGES}


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_block_runs_as_written(
    block: Block, workspaces: dict[Path, Workspace], request: pytest.FixtureRequest
) -> None:
    if block.skip is not None:
        pytest.skip(block.skip)
    blocks = [b for b in BLOCKS if b.page == block.page]
    upto = blocks[: blocks.index(block) + 1]
    if any("PostgreSQL" in need for b in upto for need in b.needs):
        workspaces[block.page].postgres = request.getfixturevalue("postgres")
    problem = workspaces[block.page].outcome(blocks, blocks.index(block))
    assert problem is None, f"{block.name}:\n{block.text}\n{problem}"


def test_every_block_is_code_we_run_or_output_we_show() -> None:
    unknown = [b.name for b in BLOCKS if b.lang not in RUN | CHECK | SHOWN]
    assert unknown == [], "give each block a language this test knows"


def test_skips_are_few_and_say_why() -> None:
    skipped = [b for b in BLOCKS if b.skip is not None]
    assert len(skipped) <= MAX_SKIPS, [b.name for b in skipped]
    assert all(len(b.skip or "") >= 20 for b in skipped), [(b.name, b.skip) for b in skipped]


def test_directives_are_understood() -> None:
    """A misspelt directive would silently not apply; only the two known ones may appear."""
    for page in PAGES:
        for line in page.read_text(encoding="utf-8").splitlines():
            if line.strip().startswith("<!-- doctest"):
                assert _DIRECTIVE.match(line.strip()), f"{page.name}: {line}"


def test_the_blocks_that_start_a_server_are_known() -> None:
    """The lock above is taken by the blocks it must keep apart."""
    serving = {b.page.name for b in BLOCKS if b.skip is None and _SERVES.search(b.text)}
    assert {"hosts.md", "ledger.md"} <= serving


def test_every_page_is_exercised() -> None:
    pages = {b.page for b in BLOCKS if b.lang in RUN | CHECK and b.skip is None}
    assert {REPO / "README.md", REPO / "docs" / "hosts.md", REPO / "docs" / "ledger.md"} <= pages


def _anchors(page: Path) -> set[str]:
    """The ids GitHub gives the page's headings."""
    found = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        match = re.match(r"#{1,6} (.+)", line)
        if match:
            slug = re.sub(r"[^\w\- ]", "", match.group(1).lower()).replace(" ", "-")
            found.add(slug)
    return found


def test_links_between_pages_resolve() -> None:
    """Relative links in README.md and docs/ name files that exist, and headings on them."""
    broken = []
    for page in PAGES:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if not resolved.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


# --- moved here with the content from the README ----------------------------------------------


def _python_blocks(page: str) -> list[str]:
    return [b.text for b in BLOCKS if b.page == REPO / page and b.lang == "python"]


def test_host_snippets_compile_and_their_imports_exist() -> None:
    """Each host's snippet is valid Python whose imports name real things."""
    blocks = _python_blocks("docs/hosts.md")
    assert len(blocks) >= 4
    for block in blocks:
        compile(block, "hosts.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        imports = "\n".join(
            line for line in block.splitlines() if line.startswith(("from ", "import "))
        )
        exec(compile(imports, "hosts.md", "exec"), {})


def test_the_built_ins_example_loads_and_guards(tmp_path: Path) -> None:
    """The built-ins YAML is a working definition: every built-in resolves."""
    from guardrails import AgentDefinition, Guard

    yaml_text = next(
        b.text for b in BLOCKS if b.page == REPO / "docs" / "builtins.md" and b.lang == "yaml"
    )
    path = tmp_path / "agent.yaml"
    path.write_text(yaml_text)
    guard = Guard(AgentDefinition.from_file(path), cwd=str(tmp_path), ledger=False)
    names = {b.hook.name for chain in guard._index.bindings.values() for b in chain}
    assert {
        "schema_guardrail",
        "schema_nudge",
        "idempotency_guard",
        "bash_side_effects",
        "deny_commands",
        "protect_paths",
        "tool_budget",
        "redact_secrets",
        "require_artifacts",
        "completion_promise",
        "skill_discovery",
    } <= names
    assert guard.sync.pre_tool_use("Bash", {"command": "git push --force"}).denied
    assert guard.sync.pre_tool_use("send_invoice", {"invoice_id": 7}).denied
    assert guard.sync.pre_tool_use("Write", {"file_path": ".env", "content": "x"}).denied
    assert not guard.sync.pre_tool_use("Bash", {"command": "ls"}).denied
