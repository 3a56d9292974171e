"""Matchers (docs/design.md §3): globs, argument rules, regexes, scope, caching, load errors.

The table pins the documented behaviour case by case; the property tests
compare the compiled matchers (wcmatch underneath) with a slow backtracking
reference written here, over a small alphabet so that matches are common.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import assume, event, given, note, settings
from hypothesis import strategies as st

import guardrails.definition.matchers as matching
from guardrails import AgentDefinition, Guard, HookMatcher, HookResult
from guardrails.definition.matchers import Pattern
from guardrails.errors import DefinitionError
from tests._guards import build_guard

#: declared tools next to Claude's built-ins: a text and two path primary arguments
TOOLS: dict[str, Any] = {
    "execute_bash_command": {"primary_arg": "command"},
    "run_sql": {"primary_arg": "query"},
    "save_file": {"primary_arg": "path"},
    "upload": {"primary_arg": "source", "arg_kind": "path"},
}
ARG_OF = AgentDefinition(name="table", tools=TOOLS).arg_of
CWD = "/abs/cwd"

# (id, pattern, subject, tool_input, cwd, expected)
CASES: list[tuple[str, str | None, str, dict[str, Any] | None, str, bool]] = [
    # --- everything ---------------------------------------------------------------
    ("none-matches-all", None, "Anything", None, "", True),
    ("empty-matches-all", "", "Bash", None, "", True),
    ("star-matches-dot-name", "*", ".hidden", None, "", True),
    ("star-matches-underscore-name", "*", "_private", None, "", True),
    ("star-matches-mcp-name", "*", "mcp__github__create_issue", None, "", True),
    # --- whole-string, case-sensitive names ---------------------------------------
    ("exact-name", "Bash", "Bash", None, "", True),
    ("lowercase-does-not-match", "bash", "Bash", None, "", False),
    ("uppercase-does-not-match", "BASH", "Bash", None, "", False),
    ("no-prefix-match", "Bash", "BashOutput", None, "", False),
    ("no-suffix-match", "Bash", "MyBash", None, "", False),
    ("prefix-star-crosses-underscores", "_*", "_private", None, "", True),
    ("dot-star-needs-a-dot", ".*", "hidden", None, "", False),
    # --- alternatives ---------------------------------------------------------------
    ("alt-first", "Edit|Write", "Edit", None, "", True),
    ("alt-second", "Edit|Write", "Write", None, "", True),
    ("alt-not-editor", "Edit|Write", "Editor", None, "", False),
    ("alt-not-notebookedit", "Edit|Write", "NotebookEdit", None, "", False),
    ("alt-spaces-around-bar", "Edit | Write", "Write", None, "", True),
    # --- * ? [..] {a,b} -------------------------------------------------------------
    ("mcp-server-star", "mcp__github__*", "mcp__github__create_issue", None, "", True),
    ("mcp-other-server", "mcp__github__*", "mcp__gitlab__x", None, "", False),
    ("mcp-two-stars", "mcp__*__delete_*", "mcp__db__delete_row", None, "", True),
    ("question-marks-count", "Web?????", "WebFetch", None, "", True),
    ("question-marks-too-few", "Web?????", "WebSearch", None, "", False),
    ("class-hit", "[RW]*", "Write", None, "", True),
    ("class-miss", "[RW]*", "Edit", None, "", False),
    ("negated-class-excludes", "[!R]ead", "Read", None, "", False),
    ("negated-class-admits", "[!R]ead", "Bead", None, "", True),
    ("brace-option", "Notebook{Edit,Read}", "NotebookRead", None, "", True),
    ("brace-no-other", "{Read,Write}", "Edit", None, "", False),
    # --- leading ! ------------------------------------------------------------------
    ("negate-excludes", "!Read", "Read", None, "", False),
    ("negate-admits-others", "!Read", "Write", None, "", True),
    ("negate-covers-all-alternatives", "!Edit|Write", "Write", None, "", False),
    ("negate-alternatives-admit-others", "!Edit|Write", "Bash", None, "", True),
    ("negate-glob", "!mcp__*", "mcp__github__x", None, "", False),
    # --- re: ------------------------------------------------------------------------
    ("regex-full-match", "re:mcp__.*__(get|list)_.*", "mcp__gh__list_prs", None, "", True),
    ("regex-not-a-search", "re:Bash", "BashOutput", None, "", False),
    ("regex-alternation-is-whole", "re:Read|Write", "Write", None, "", True),
    ("regex-case-sensitive", "re:bash", "Bash", None, "", False),
    ("regex-inline-ignorecase", "re:(?i)bash", "Bash", None, "", True),
    # --- Bash: command, * crosses / -----------------------------------------------
    ("bash-push-branch", "Bash(git push *)", "Bash", {"command": "git push origin main"}, "", True),
    (
        "bash-star-crosses-slash",
        "Bash(git push *)",
        "Bash",
        {"command": "git push origin feature/x"},
        "",
        True,
    ),
    ("bash-not-push-force", "Bash(git push *)", "Bash", {"command": "git push-force x"}, "", False),
    ("bash-not-status", "Bash(git push *)", "Bash", {"command": "git status"}, "", False),
    ("bash-rule-other-tool", "Bash(git push *)", "Read", {"command": "git push x"}, "", False),
    ("bash-missing-command", "Bash(rm *)", "Bash", {}, "", False),
    ("bash-non-string-command", "Bash(*)", "Bash", {"command": ["rm", "-rf"]}, "", False),
    ("bash-star-empty-command", "Bash(*)", "Bash", {"command": ""}, "", True),
    ("bash-empty-command-needs-empty-glob", "Bash(ls*)", "Bash", {"command": ""}, "", False),
    ("bash-multiline-command", "Bash(rm *)", "Bash", {"command": "rm a\nrm b"}, "", True),
    ("bash-case-sensitive", "Bash(git *)", "Bash", {"command": "GIT status"}, "", False),
    (
        "bash-legacy-prefix-bare",
        "Bash(npm run test:*)",
        "Bash",
        {"command": "npm run test"},
        "",
        True,
    ),
    (
        "bash-legacy-prefix-args",
        "Bash(npm run test:*)",
        "Bash",
        {"command": "npm run test -k x"},
        "",
        True,
    ),
    (
        "bash-legacy-prefix-word",
        "Bash(npm run test:*)",
        "Bash",
        {"command": "npm run testing"},
        "",
        False,
    ),
    # --- | inside parentheses is part of the rule ---------------------------------
    ("pipe-rule-matches", "Bash(curl * | sh)", "Bash", {"command": "curl x.io/i | sh"}, "", True),
    ("pipe-rule-needs-pipe", "Bash(curl * | sh)", "Bash", {"command": "curl x.io"}, "", False),
    ("pipe-rule-not-read", "Bash(curl * | sh)", "Read", {"file_path": "/etc/hosts"}, "", False),
    ("two-alts-read", "Read|Bash(curl * | sh)", "Read", {"file_path": "/etc/hosts"}, "", True),
    ("two-alts-bash", "Read|Bash(curl * | sh)", "Bash", {"command": "curl x | sh"}, "", True),
    ("two-alts-bash-miss", "Read|Bash(curl * | sh)", "Bash", {"command": "ls"}, "", False),
    ("pipe-in-class-no-split", "Bash(echo [(|])|Read", "Read", {}, "", True),
    ("negated-rule-admits", "!Bash(rm *)", "Bash", {"command": "ls"}, "", True),
    ("negated-rule-excludes", "!Bash(rm *)", "Bash", {"command": "rm -rf /"}, "", False),
    ("any-tool-rule", "*(git *)", "Bash", {"command": "git log"}, "", True),
    # --- WebFetch url, Glob/Grep pattern: text --------------------------------------
    (
        "url-star-crosses-slash",
        "WebFetch(https://github.com/*)",
        "WebFetch",
        {"url": "https://github.com/org/repo/pulls"},
        "",
        True,
    ),
    (
        "url-other-host",
        "WebFetch(https://github.com/*)",
        "WebFetch",
        {"url": "https://gitlab.com/org"},
        "",
        False,
    ),
    ("glob-pattern-is-text", "Glob(*.py)", "Glob", {"pattern": "src/**/*.py"}, "", True),
    ("grep-pattern", "Grep(TODO*)", "Grep", {"pattern": "TODO|FIXME"}, "", True),
    # --- paths: globstar, anchored at cwd, .. resolved ------------------------------
    ("path-globstar-deep", "Write(src/**)", "Write", {"file_path": "src/a/b.py"}, CWD, True),
    ("path-sibling-dir", "Write(src/**)", "Write", {"file_path": "src2/x.py"}, CWD, False),
    (
        "path-absolute-under-cwd",
        "Write(src/**)",
        "Write",
        {"file_path": "/abs/cwd/src/a.py"},
        CWD,
        True,
    ),
    (
        "path-absolute-elsewhere",
        "Write(src/**)",
        "Write",
        {"file_path": "/other/src/a.py"},
        CWD,
        False,
    ),
    ("path-not-the-dir-itself", "Write(src/**)", "Write", {"file_path": "src"}, CWD, False),
    (
        "path-dotdot-in-value-leaves",
        "Write(src/**)",
        "Write",
        {"file_path": "/abs/cwd/src/../src2/x.py"},
        CWD,
        False,
    ),
    (
        "path-dotdot-in-value-enters",
        "Write(src/**)",
        "Write",
        {"file_path": "lib/../src/x.py"},
        CWD,
        True,
    ),
    ("path-star-one-level", "Write(src/*)", "Write", {"file_path": "src/a.py"}, CWD, True),
    ("path-star-not-deeper", "Write(src/*)", "Write", {"file_path": "src/a/b.py"}, CWD, False),
    ("path-star-dotfile", "Write(src/*)", "Write", {"file_path": "src/.env"}, CWD, True),
    ("path-relative-star-cwd-only", "Edit(*.py)", "Edit", {"file_path": "src/a.py"}, CWD, False),
    ("path-relative-star-in-cwd", "Edit(*.py)", "Edit", {"file_path": "/abs/cwd/a.py"}, CWD, True),
    (
        "path-globstar-prefix",
        "Read(**/*.pem)",
        "Read",
        {"file_path": "/abs/cwd/x/y/k.pem"},
        CWD,
        True,
    ),
    ("path-globstar-zero-dirs", "Read(**/*.pem)", "Read", {"file_path": "k.pem"}, CWD, True),
    ("path-globstar-anchored", "Read(**/*.pem)", "Read", {"file_path": "/etc/k.pem"}, CWD, False),
    (
        "path-absolute-rule",
        "Read(/etc/**)",
        "Read",
        {"file_path": "/etc/ssh/sshd_config"},
        CWD,
        True,
    ),
    (
        "path-dotdot-in-rule",
        "Write(../shared/*)",
        "Write",
        {"file_path": "/abs/shared/x"},
        CWD,
        True,
    ),
    ("path-dotdot-mid-rule", "Write(src/../lib/*)", "Write", {"file_path": "lib/a.py"}, CWD, True),
    (
        "path-dotdot-above-root",
        "Read(../../../etc/*)",
        "Read",
        {"file_path": "/etc/passwd"},
        CWD,
        True,
    ),
    ("path-case-sensitive", "Read(SRC/**)", "Read", {"file_path": "src/a.py"}, CWD, False),
    ("path-brace", "Write({src,lib}/*.py)", "Write", {"file_path": "lib/a.py"}, CWD, True),
    ("path-class-miss", "Write(src/[ab].py)", "Write", {"file_path": "src/c.py"}, CWD, False),
    (
        "path-trailing-slash-is-below",
        "Write(src/)",
        "Write",
        {"file_path": "src/a/b.py"},
        CWD,
        True,
    ),
    ("path-relative-cwd", "Write(src/**)", "Write", {"file_path": "src/a.py"}, "proj", True),
    (
        "path-cwd-glob-chars-literal",
        "Write(src/**)",
        "Write",
        {"file_path": "/abs/cwd/src/a.py"},
        "/abs/c[w]d",
        False,
    ),
    (
        "path-cwd-glob-chars-anchor",
        "Write(src/**)",
        "Write",
        {"file_path": "src/a.py"},
        "/abs/c[w]d",
        True,
    ),
    (
        "notebook-path",
        "NotebookEdit(nb/**)",
        "NotebookEdit",
        {"notebook_path": "/abs/cwd/nb/x.ipynb"},
        CWD,
        True,
    ),
    # --- declared tools: primary_arg -----------------------------------------------
    (
        "declared-text-arg",
        "execute_bash_command(git push --force*)",
        "execute_bash_command",
        {"command": "git push --force-with-lease"},
        "",
        True,
    ),
    ("declared-sql", "run_sql(DROP *)", "run_sql", {"query": "DROP TABLE users"}, "", True),
    ("declared-path-arg-deep", "save_file(out/*)", "save_file", {"path": "out/a/b"}, CWD, False),
    ("declared-path-arg", "save_file(out/*)", "save_file", {"path": "out/a"}, CWD, True),
    ("declared-arg-kind-path", "upload(/data/**)", "upload", {"source": "/data/a/b"}, CWD, True),
    ("undeclared-tool-no-arg", "Foo(x)", "Foo", {"x": "x"}, "", False),
]


@pytest.mark.parametrize(
    ("pattern", "subject", "tool_input", "cwd", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_matcher_table(
    pattern: str | None,
    subject: str,
    tool_input: dict[str, Any] | None,
    cwd: str,
    expected: bool,
) -> None:
    assert Pattern(pattern).matches(subject, tool_input, cwd, ARG_OF) is expected


# --- load-time errors -------------------------------------------------------------------


def _noop(event: Any, ctx: Any) -> None:
    return None


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param("Bash(git push", id="unclosed-paren"),
        pytest.param("Bash)", id="stray-close-paren"),
        pytest.param("{Read,Write", id="unclosed-brace"),
        pytest.param("Read}", id="stray-close-brace"),
        pytest.param("Bash(ls [)", id="unclosed-bracket"),
        pytest.param("Edit||Write", id="empty-alternative"),
        pytest.param("|Edit", id="leading-bar"),
        pytest.param("Edit|", id="trailing-bar"),
        pytest.param("!", id="lone-bang"),
        pytest.param("! ", id="bang-space"),
        pytest.param("Read|!Write", id="bang-inside"),
        pytest.param("re:[", id="bad-regex"),
        pytest.param("(x)", id="rule-without-tool"),
        pytest.param("Bash()", id="rule-empty-glob"),
        pytest.param("Bash(a)(b)", id="two-rules-one-tool"),
        pytest.param("Bash(a)b", id="text-after-rule"),
        pytest.param("{a,b}" * 10, id="brace-bomb"),
    ],
)
def test_bad_pattern_is_a_definition_error(pattern: str) -> None:
    with pytest.raises(DefinitionError):
        HookMatcher(matcher=pattern, hooks=[_noop])


def test_bad_pattern_error_names_event_and_index() -> None:
    with pytest.raises(DefinitionError) as info:
        AgentDefinition(
            hooks={
                "PreToolUse": [
                    HookMatcher(matcher="Bash", hooks=[_noop]),
                    {"matcher": "Edit||Write", "hooks": [_noop]},
                ]
            }
        )
    assert info.value.path == "hooks.PreToolUse[1].matcher"


# --- scope: agents= and tenants= --------------------------------------------------------


def _guard(*matchers: HookMatcher, name: str = "main") -> Guard:
    return build_guard(list(matchers), name=name)


def _ran(decision: Any) -> list[str]:
    return [run.matcher for run in decision.runs]


def _scoped_guard() -> Guard:
    return _guard(
        HookMatcher(matcher="Bash", hooks=[_noop], name="everyone"),
        HookMatcher(matcher="Bash", hooks=[_noop], agents=["work*"], name="workers"),
        HookMatcher(matcher="Bash", hooks=[_noop], tenants=["acme", "acme-*"], name="acme"),
        name="researcher",
    )


def test_agents_scope_matches_agent_type() -> None:
    decision = _scoped_guard().sync.pre_tool_use("Bash", {"command": "ls"}, agent_type="worker")
    assert _ran(decision) == ["everyone", "workers"]


def test_agents_scope_excludes_other_agent_type() -> None:
    decision = _scoped_guard().sync.pre_tool_use("Bash", {"command": "ls"}, agent_type="planner")
    assert _ran(decision) == ["everyone"]


def test_agents_scope_uses_definition_name_on_main_thread() -> None:
    guard = _guard(
        HookMatcher(matcher="*", hooks=[_noop], agents=["research*"], name="researchers"),
        name="researcher",
    )
    assert _ran(guard.sync.pre_tool_use("Read", {"file_path": "a"})) == ["researchers"]


def test_agents_scope_is_case_sensitive() -> None:
    decision = _scoped_guard().sync.pre_tool_use("Bash", {"command": "ls"}, agent_type="Worker")
    assert _ran(decision) == ["everyone"]


def test_tenants_scope_matches_session_tenant() -> None:
    guard = _scoped_guard()
    decision = guard.session(tenant="acme-eu").sync.pre_tool_use("Bash", {"command": "ls"})
    assert _ran(decision) == ["everyone", "acme"]


def test_tenants_scope_excludes_other_tenant() -> None:
    guard = _scoped_guard()
    decision = guard.session(tenant="globex").sync.pre_tool_use("Bash", {"command": "ls"})
    assert _ran(decision) == ["everyone"]


def test_tenants_scope_excludes_session_without_tenant() -> None:
    decision = _scoped_guard().sync.pre_tool_use("Bash", {"command": "ls"})
    assert _ran(decision) == ["everyone"]


def test_tenants_scope_uses_guard_default_tenant() -> None:
    definition = _scoped_guard().definition
    decision = Guard(definition, tenant="acme").sync.pre_tool_use("Bash", {"command": "ls"})
    assert _ran(decision) == ["everyone", "acme"]


def test_scope_and_pattern_both_apply() -> None:
    guard = _guard(
        HookMatcher(matcher="Bash(rm *)", hooks=[_noop], agents=["worker"], name="worker-rm"),
    )
    rm = guard.sync.pre_tool_use("Bash", {"command": "rm x"}, agent_type="worker")
    ls = guard.sync.pre_tool_use("Bash", {"command": "ls"}, agent_type="worker")
    other = guard.sync.pre_tool_use("Bash", {"command": "rm x"}, agent_type="planner")
    assert (_ran(rm), _ran(ls), _ran(other)) == (["worker-rm"], [], [])


def test_subagent_event_subject_is_agent_type() -> None:
    guard = Guard(
        AgentDefinition(
            hooks={"SubagentStop": [HookMatcher(matcher="review*", hooks=[_noop], name="rev")]}
        )
    )
    assert _ran(guard.sync.subagent_stop("a1", "reviewer")) == ["rev"]
    assert _ran(guard.sync.subagent_stop("a2", "planner")) == []


def test_arg_rule_sees_input_rewritten_by_earlier_hook() -> None:
    def rewrite(event: Any, ctx: Any) -> HookResult:
        return HookResult(updated_input={"command": "rm -rf build"})

    guard = _guard(
        HookMatcher(matcher="Bash", hooks=[rewrite], priority=1, name="rewrite"),
        HookMatcher(matcher="Bash(rm *)", hooks=[_noop], priority=2, name="rm"),
    )
    assert _ran(guard.sync.pre_tool_use("Bash", {"command": "make clean"})) == ["rewrite", "rm"]


# --- caching: chains per (event, subject), patterns compiled once -----------------------


def _cache_guard() -> Guard:
    return _guard(
        HookMatcher(matcher="Edit|Write", hooks=[_noop], name="edits"),
        HookMatcher(matcher="Write(src/**)", hooks=[_noop], name="src"),
        HookMatcher(matcher="Bash(git push *)", hooks=[_noop], name="push"),
        HookMatcher(matcher="mcp__*", hooks=[_noop], agents=["main"], name="mcp"),
    )


def test_chain_is_cached_per_event_and_subject() -> None:
    guard = _cache_guard()
    first = guard._index.lookup("PreToolUse", "Write", "main", None)
    guard.sync.pre_tool_use("Write", {"file_path": "src/a.py"})
    assert guard._index.lookup("PreToolUse", "Write", "main", None) is first


def test_chain_differs_per_subject() -> None:
    guard = _cache_guard()
    write = guard._index.lookup("PreToolUse", "Write", "main", None)
    bash = guard._index.lookup("PreToolUse", "Bash", "main", None)
    assert [b.label for b, _ in write[0]] == ["edits", "src"]
    assert [b.label for b, _ in bash[0]] == ["push"]


def test_chain_keeps_only_the_residual_argument_test() -> None:
    chain, _ = _cache_guard()._index.lookup("PreToolUse", "Write", "main", None)
    assert [pred is None for _, pred in chain] == [True, False]


class _CompileSpy:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.real = matching.compile_glob

    def __call__(self, glob: str, *, path: bool = False) -> Any:
        self.calls.append(glob)
        return self.real(glob, path=path)


def test_patterns_compile_once_not_at_dispatch(monkeypatch: pytest.MonkeyPatch) -> None:
    guard = _cache_guard()
    calls = [
        ("Write", {"file_path": "src/a.py"}),
        ("Edit", {"file_path": "README.md"}),
        ("Bash", {"command": "git push origin main"}),
        ("mcp__github__list", {}),
    ]
    for tool, tool_input in calls:
        guard.sync.pre_tool_use(tool, tool_input)
    spy = _CompileSpy()
    monkeypatch.setattr(matching, "compile_glob", spy)
    for _ in range(3):
        for tool, tool_input in calls:
            guard.sync.pre_tool_use(tool, dict(tool_input))
    assert spy.calls == []
    Pattern("Write(lib/**)")  # the spy is live: construction goes through it
    assert spy.calls != []


def test_new_cwd_needs_no_compilation(monkeypatch: pytest.MonkeyPatch) -> None:
    pattern = Pattern("Write(src/**)")
    spy = _CompileSpy()
    monkeypatch.setattr(matching, "compile_glob", spy)
    for cwd in ("/a", "/b/c", "rel"):
        assert pattern.matches("Write", {"file_path": "src/x.py"}, cwd)
    assert spy.calls == []


# --- property tests against a slow reference --------------------------------------------
#
# The reference knows nothing of wcmatch or regexes. It expands braces into
# plain globs, then backtracks over tokens. Name and text globs: ``*`` is any run
# of characters (``/`` included, none at all too, so ``*`` matches ""), ``?`` one
# character, ``[..]``/``[!..]`` a class; ``|`` inside ``Tool(...)`` is a literal.
# Path globs: both sides are split into segments and ``.``/``..``/empty ones
# resolved; ``**`` as a whole segment is zero or more segments (one or more at
# the end: ``src/**`` is what is inside ``src``), other segments match one
# segment each with the same token rules.

NAME_CHARS = "ab_./ "
TEXT_CHARS = "ab_./ |"
SEGMENT_CHARS = "ab_. "


def _class_end(glob: str, start: int) -> int:
    """Index just past the class opening at ``start`` (a class holds one char at least)."""
    return glob.index("]", start + 2) + 1


def _expand(glob: str) -> list[str]:
    """Brace expansion: ``a{b,c{d,e}}`` -> ``ab``, ``acd``, ``ace``."""
    i = 0
    while i < len(glob):
        if glob[i] == "[":
            i = _class_end(glob, i)
            continue
        if glob[i] == "{":
            depth, j, start, options = 0, i, i + 1, []
            while True:
                ch = glob[j]
                if ch == "[":
                    j = _class_end(glob, j)
                    continue
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if depth == 0:
                        options.append(glob[start:j])
                        break
                elif ch == "," and depth == 1:
                    options.append(glob[start:j])
                    start = j + 1
                j += 1
            head, tails = glob[:i], _expand(glob[j + 1 :])
            return [head + o + t for opt in options for o in _expand(opt) for t in tails]
        i += 1
    return [glob]


Token = tuple[str, Any]


def _tokens(glob: str) -> list[Token]:
    out: list[Token] = []
    i = 0
    while i < len(glob):
        ch = glob[i]
        if ch == "*":
            while i < len(glob) and glob[i] == "*":
                i += 1
            out.append(("*", None))
            continue
        if ch == "[":
            end = _class_end(glob, i)
            body = glob[i + 1 : end - 1]
            negated = body.startswith("!")
            out.append(("[", (frozenset(body[1:] if negated else body), negated)))
            i = end
            continue
        out.append(("?", None) if ch == "?" else ("lit", ch))
        i += 1
    return out


def _match_tokens(tokens: list[Token], text: str) -> bool:
    @functools.cache
    def go(t: int, s: int) -> bool:
        if t == len(tokens):
            return s == len(text)
        kind, arg = tokens[t]
        if kind == "*":
            return any(go(t + 1, k) for k in range(s, len(text) + 1))
        if s == len(text):
            return False
        ch = text[s]
        if kind == "?":
            ok = True
        elif kind == "[":
            ok = (ch in arg[0]) != arg[1]
        else:
            ok = ch == arg
        return ok and go(t + 1, s + 1)

    return go(0, 0)


def ref_glob(glob: str, text: str) -> bool:
    return any(_match_tokens(_tokens(g), text) for g in _expand(glob))


def ref_name_pattern(pattern: str, subject: str) -> bool:
    negate = pattern.startswith("!")
    body = pattern[1:] if negate else pattern
    alternatives = body.split("|")  # generated name patterns have no nested "|"
    return any(ref_glob(alt.strip(), subject) for alt in alternatives) != negate


def _resolve(segments: list[Any]) -> list[Any]:
    out: list[Any] = []
    for seg in segments:
        text = seg[1] if isinstance(seg, tuple) else seg
        if text in ("", "."):
            continue
        if text == "..":
            if out:
                out.pop()
            continue
        out.append(seg)
    return out


def _match_segments(pattern: list[tuple[str, str]], path: list[str]) -> bool:
    if not pattern:
        return not path
    kind, seg = pattern[0]
    if kind == "glob" and seg == "**":
        if len(pattern) == 1:
            return len(path) >= 1
        return any(_match_segments(pattern[1:], path[k:]) for k in range(len(path) + 1))
    if not path:
        return False
    ok = path[0] == seg if kind == "lit" else _match_tokens(_tokens(seg), path[0])
    return ok and _match_segments(pattern[1:], path[1:])


def ref_path_segments(value: str, cwd: str) -> list[str]:
    base = [] if value.startswith("/") else cwd.split("/")
    return _resolve([*base, *value.split("/")])


def ref_path_glob(glob: str, value: str, cwd: str) -> bool:
    """Path-glob semantics: relative globs hang off ``cwd``, taken literally."""
    path = ref_path_segments(value, cwd)
    base = [] if glob.startswith("/") else [("lit", s) for s in cwd.split("/")]
    return any(
        _match_segments(_resolve([*base, *(("glob", s) for s in g.split("/"))]), path)
        for g in _expand(glob)
    )


# --- strategies -------------------------------------------------------------------------


def _atoms(chars: str, depth: int) -> st.SearchStrategy[str]:
    literal = st.sampled_from(chars)
    klass = st.builds(
        lambda negated, members: "[" + ("!" if negated else "") + "".join(sorted(members)) + "]",
        st.booleans(),
        st.sets(literal, min_size=1, max_size=3),
    )
    basic = st.one_of(literal, literal, literal, st.just("*"), st.just("?"), klass)
    if depth == 0:
        return basic
    return st.one_of(basic, _brace(chars, depth - 1))


def _sequence(chars: str, depth: int, min_size: int = 1) -> st.SearchStrategy[str]:
    return st.lists(_atoms(chars, depth), min_size=min_size, max_size=4).map("".join)


def _brace(chars: str, depth: int) -> st.SearchStrategy[str]:
    options = st.lists(_sequence(chars, depth, min_size=0), min_size=2, max_size=3)
    return options.map(lambda opts: "{" + ",".join(opts) + "}")


def _usable(glob: str) -> bool:
    """Not blank, and few brace expansions (the reference enumerates them all)."""
    return glob.strip() != "" and len(_expand(glob)) <= 64


name_globs = _sequence(NAME_CHARS, depth=2).filter(_usable)
name_patterns = st.builds(
    lambda negated, alts: ("!" if negated else "") + "|".join(alts),
    st.booleans(),
    st.lists(name_globs, min_size=1, max_size=3),
)
text_globs = _sequence(TEXT_CHARS, depth=2).filter(_usable)


def _plain_segment(seg: str) -> bool:
    return all(part not in ("", ".", "..") for part in _expand(seg))


path_segments = st.one_of(
    _sequence(SEGMENT_CHARS, depth=1).filter(_plain_segment),
    _sequence(SEGMENT_CHARS, depth=1).filter(_plain_segment),
    st.just("**"),
    st.just(".."),
    st.just("."),
)
relative_globs = (
    st.lists(path_segments, min_size=1, max_size=4).map("/".join).filter(lambda g: g.strip() != "")
)
CWDS = ["/abs/cwd", "/", "/abs", "abs/cwd", "/a[b]/c*"]


def _sample(draw: st.DrawFn, glob: str, chars: str, star: str) -> str:
    """A string the (brace-free) ``glob`` matches; ``star`` is what ``*`` may produce."""
    out: list[str] = []
    for kind, arg in _tokens(glob):
        if kind == "*":
            out.append(draw(st.text(star, max_size=3)))
        elif kind == "?":
            out.append(draw(st.sampled_from(chars)))
        elif kind == "[":
            members, negated = arg
            pool = [c for c in chars if (c in members) != negated] or list(chars)
            out.append(draw(st.sampled_from(pool)))
        else:
            out.append(arg)
    return "".join(out)


def _mutate(draw: st.DrawFn, text: str, chars: str) -> str:
    """Usually ``text`` as it is; sometimes one character replaced, inserted or dropped."""
    how = draw(st.sampled_from(["keep", "keep", "replace", "insert", "drop"]))
    if how == "keep":
        return text
    at = draw(st.integers(0, len(text)))
    ch = draw(st.sampled_from(chars))
    if how == "insert":
        return text[:at] + ch + text[at:]
    if at == len(text):
        return text
    return text[:at] + (ch if how == "replace" else "") + text[at + 1 :]


def _text_for(draw: st.DrawFn, glob: str, chars: str) -> str:
    if draw(st.booleans()):
        return draw(st.text(chars, min_size=1, max_size=6))
    sample = _sample(draw, draw(st.sampled_from(_expand(glob))), chars, chars)
    return _mutate(draw, sample, chars)


def _path_for(draw: st.DrawFn, glob: str) -> str:
    segments: list[str] = []
    for seg in draw(st.sampled_from(_expand(glob))).split("/"):
        if seg == "**":
            n = draw(st.integers(0, 2))
            segments += [draw(st.text(SEGMENT_CHARS, min_size=1, max_size=3)) for _ in range(n)]
        else:
            segments.append(_sample(draw, seg, SEGMENT_CHARS, SEGMENT_CHARS))
    return _mutate(draw, "/".join(segments), SEGMENT_CHARS + "/")


def _record(expected: bool) -> None:
    event("match" if expected else "no match")


def _compiled(source: str) -> Pattern:
    """The pattern, or a rejected example when its braces expand past wcmatch's limit
    (a load-time DefinitionError by design; tested on its own above)."""
    try:
        return Pattern(source)
    except DefinitionError as exc:
        assume("brace expansions" not in str(exc))
        raise


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_name_patterns_agree_with_reference(data: st.DataObject) -> None:
    pattern = data.draw(name_patterns, label="pattern")
    alternative = data.draw(st.sampled_from(pattern.lstrip("!").split("|")))
    subject = _text_for(data.draw, alternative.strip(), NAME_CHARS)
    note(f"subject={subject!r}")
    expected = ref_name_pattern(pattern, subject)
    _record(expected)
    assert _compiled(pattern).matches(subject) is expected


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_command_rules_agree_with_reference(data: st.DataObject) -> None:
    glob = data.draw(text_globs, label="glob")
    negated = data.draw(st.booleans(), label="negated")
    command = _text_for(data.draw, glob, TEXT_CHARS)
    note(f"command={command!r}")
    expected = ref_glob(glob, command) != negated
    _record(expected)
    pattern = _compiled(("!" if negated else "") + f"Bash({glob})")
    assert pattern.matches("Bash", {"command": command}) is expected


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_absolute_path_rules_agree_with_reference(data: st.DataObject) -> None:
    glob = "/" + data.draw(relative_globs, label="glob")
    cwd = data.draw(st.sampled_from(CWDS), label="cwd")
    value = _path_for(data.draw, glob[1:])
    if data.draw(st.booleans(), label="absolute value"):
        value = "/" + value  # else relative: resolved under cwd ("/" keeps it a match)
    if not ref_path_segments(value, cwd):
        value += "/a"  # the root itself is nothing's content: keep to real files
    note(f"file_path={value!r}")
    expected = ref_path_glob(glob, value, cwd)
    _record(expected)
    assert _compiled(f"Write({glob})").matches("Write", {"file_path": value}, cwd) is expected


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_relative_path_rules_agree_with_reference(data: st.DataObject) -> None:
    glob = data.draw(relative_globs, label="glob")
    cwd = data.draw(st.sampled_from(CWDS), label="cwd")
    value = _path_for(data.draw, glob)
    if data.draw(st.booleans(), label="absolute value"):
        value = "/" + cwd.strip("/") + "/" + value
    if not ref_path_segments(value, cwd):
        value += "/a"
    note(f"file_path={value!r}")
    expected = ref_path_glob(glob, value, cwd)
    _record(expected)
    assert _compiled(f"Edit({glob})").matches("Edit", {"file_path": value}, cwd) is expected


def test_names_matching_lists_the_alternatives_naming_a_subject() -> None:
    pattern = Pattern("Bash(git *)|Re*|Write")
    assert pattern.names_matching("Bash") == ["Bash"]  # argument rules aside
    assert pattern.names_matching("bash") == []
    assert pattern.names_matching("bash", ignore_case=True) == ["Bash"]
    assert pattern.names_matching("read", ignore_case=True) == ["Re*"]
    assert Pattern("re:ba.h").names_matching("BASH", ignore_case=True) == ["re:ba.h"]
    assert Pattern("*").names_matching("anything") == []  # match-all: nothing to name
