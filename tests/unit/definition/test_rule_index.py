"""The argument rules of a chain tested together (``RuleIndex``) select exactly the chain
positions the rules select one by one (``ArgPredicate``), on a generated table of rules and
inputs: text and path arguments, alternation, negation, braces, classes, escapes, the
legacy ``:*`` form, relative, absolute and climbing path rules."""

from __future__ import annotations

import itertools
import random

import pytest

from guardrails.definition.matchers import ArgPredicate, Pattern, builtin_arg_of
from guardrails.definition.rule_index import RuleIndex

TEXT_GLOBS = [
    "git push *",
    "git *",
    "git",
    "*rm -rf*",
    "npm run test:*",
    "cmd1 *",
    "cmd10 *",
    "cmd1?",
    "{curl,wget} *",
    "ls [ab]*",
    "echo \\*",
    "*",
    "a*b",
    "curl * | sh",
    "git push --force*",
]
PATH_GLOBS = [
    "src/**",
    "src/*.py",
    "/etc/**",
    "/etc/passwd",
    "../secret/*",
    "../../*",
    ".",
    "..",
    "~/.ssh/**",
    "**/.env",
    "docs/",
    "src/{a,b}/*.md",
    "/",
    "[a-c]*/x",
]
TEXT_INPUTS = [
    "git push origin main",
    "git push --force",
    "git",
    "git status",
    "rm -rf /",
    "sudo rm -rf build",
    "npm run test",
    "npm run test:unit",
    "npm run test --watch",
    "cmd1 x",
    "cmd10 y",
    "cmd1",
    "cmd12",
    "curl http://x | sh",
    "wget x",
    "ls a",
    "ls c",
    "echo *",
    "echo x",
    "ab",
    "a-b",
    "",
    "gi",
]
PATH_INPUTS = [
    "src/a.py",
    "src/b/c.py",
    "/etc/passwd",
    "/etc/ssh/sshd_config",
    "../secret/key",
    "/work/secret/key",
    "../../x",
    ".",
    "..",
    "~/.ssh/id_rsa",
    "a/b/.env",
    ".env",
    "docs/x/y.md",
    "src/a/readme.md",
    "/",
    "b/x",
    "d/x",
    "src/../etc/passwd",
    "",
]
CWDS = ["/work/proj", "/", "/work", "relative/dir"]


def _preds(tool: str, sources: list[str]) -> list[ArgPredicate | None]:
    out: list[ArgPredicate | None] = []
    for source in sources:
        spec = Pattern(source).specialize(tool, builtin_arg_of)
        assert spec is not False
        out.append(None if spec is True else spec)  # type: ignore[arg-type]
    return out


def _table(globs: list[str], tool: str, seed: int) -> list[str]:
    """Matcher sources for one chain: single rules, alternations, negations, no rule."""
    rng = random.Random(seed)
    sources = [f"{tool}({g})" for g in globs]
    for _ in range(12):
        a, b = rng.sample(globs, 2)
        sources.append(f"{tool}({a})|{tool}({b})")
    for g in rng.sample(globs, 4):
        sources.append(f"!{tool}({g})")
    sources.append(tool)  # no argument rule: always selected
    rng.shuffle(sources)
    return sources


@pytest.mark.parametrize(
    ("tool", "globs", "inputs"),
    [("Bash", TEXT_GLOBS, TEXT_INPUTS), ("Write", PATH_GLOBS, PATH_INPUTS)],
    ids=["text", "path"],
)
@pytest.mark.parametrize("seed", range(4))
def test_index_selects_what_the_rules_select_one_by_one(
    tool: str, globs: list[str], inputs: list[str], seed: int
) -> None:
    preds = _preds(tool, _table(globs, tool, seed))
    index = RuleIndex(preds)
    arg = builtin_arg_of(tool)[0]  # type: ignore[index]
    for value, cwd in itertools.product(inputs, CWDS):
        tool_input = {arg: value}
        expected = [i for i, p in enumerate(preds) if p is None or p(tool_input, cwd)]
        assert index.positions(tool_input, cwd) == expected, (value, cwd)
        assert index.positions(tool_input, cwd, 3) == [i for i in expected if i >= 3]


def test_a_missing_or_non_text_argument_matches_no_rule() -> None:
    preds = _preds("Bash", ["Bash(*)", "!Bash(git *)", "Bash"])
    index = RuleIndex(preds)
    for tool_input in ({}, {"command": 3}, {"command": None}):
        expected = [i for i, p in enumerate(preds) if p is None or p(tool_input, "/")]
        assert index.positions(tool_input, "/") == expected == [1, 2]


def test_a_thousand_rules_are_filed_by_prefix() -> None:
    """1,000 ``Bash(cmd<i> *)`` rules: a call tests only the rules its prefixes name."""
    preds = _preds("Bash", [f"Bash(cmd{i} *)" for i in range(1000)])
    index = RuleIndex(preds)
    assert index.positions({"command": "cmd517 --x"}, "/") == [517]
    assert index.positions({"command": "ls"}, "/") == []
    assert len(index._text.candidates("cmd517 --x")) == 1
