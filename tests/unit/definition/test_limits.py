"""Definition files over the bounds (too large, too deep, YAML aliases that expand or recurse):
one located line naming the file and the limit, in every format, never a traceback or a hang."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from guardrails import AgentDefinition, Guard
from guardrails.cli.main import cli
from guardrails.definition.limits import MAX_BYTES, MAX_DEPTH, MAX_NODES
from guardrails.errors import DefinitionError

TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels, the limit"
TOO_LARGE = f"larger than {MAX_BYTES // (1024 * 1024)} MiB, the limit"
EXPANDS = f"expand to more than {MAX_NODES:,} values, the limit"


def _laughs() -> str:
    """The "billion laughs": nine levels of ten aliases each, 10**9 values once expanded."""
    lines = ["name: lol", "tools:", "  t:", "    annotations:"]
    lines.append('      l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]')
    for i in range(1, 10):
        lines.append(f"      l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]")
    return "\n".join(lines) + "\n"


def _alias_chain(n: int) -> str:
    """Each anchor holds the one before: shallow as written, ``n`` deep once expanded."""
    lines = ["tools:", "  t:", "    annotations:", "      a0: &a0 [x]"]
    lines += [f"      a{i}: &a{i} [*a{i - 1}]" for i in range(1, n)]
    return "\n".join(lines) + "\n"


def _block_mappings(n: int) -> str:
    """``n`` mappings nested in block style (indentation), under the annotations."""
    body = "".join("  " * (3 + i) + "k:\n" for i in range(n)) + "  " * (3 + n) + "end: 1\n"
    return "tools:\n  t:\n    annotations:\n" + body


@dataclass(frozen=True)
class Over:
    id: str
    fmt: str
    text: Callable[[], str]
    says: str
    line: int | None


OVER = [
    Over("yaml-5000-deep-flow", "yaml", lambda: "a: " + "[" * 5000 + "]" * 5000 + "\n",
         TOO_DEEP, 1),
    Over("yaml-deep-block-mappings", "yaml", lambda: _block_mappings(150), TOO_DEEP, 101),
    Over("yaml-billion-laughs", "yaml", _laughs, EXPANDS, 10),  # l5: 900,000
    Over("yaml-alias-chain-deep-once-expanded", "yaml", lambda: _alias_chain(150), TOO_DEEP, 99),
    Over("yaml-recursive-alias", "yaml", lambda: "tools:\n  t:\n    annotations: &a {me: *a}\n",
         "used inside its own anchor", 3),
    Over("yaml-recursive-alias-in-a-list", "yaml",
         lambda: "name: x\ndescription: &d [a, [b, *d]]\n", "used inside its own anchor", 2),
    Over("yaml-too-large", "yaml", lambda: "name: x\n# " + "x" * MAX_BYTES + "\n", TOO_LARGE, None),
    Over("json-5000-deep", "json", lambda: '{"name": ' + "[" * 5000 + "]" * 5000 + "}",
         TOO_DEEP, None),
    Over("json-150-deep", "json",
         lambda: '{"tools": {"t": {"annotations": {"a": ' + "[" * 150 + "]" * 150 + "}}}}",
         TOO_DEEP, None),
    Over("json-too-large", "json", lambda: '{"name": "x"}' + " " * MAX_BYTES, TOO_LARGE, None),
    Over("toml-5000-deep-array", "toml", lambda: "a = " + "[" * 5000 + "]" * 5000 + "\n",
         TOO_DEEP, None),
    Over("toml-5000-deep-tables", "toml", lambda: "[" + ".".join(["a"] * 5000) + "]\nx = 1\n",
         TOO_DEEP, None),
    Over("toml-150-deep-inline-tables", "toml",
         lambda: "[tools.t]\nannotations = " + "{a = " * 150 + "1" + "}" * 150 + "\n",
         TOO_DEEP, None),
    Over("toml-too-large", "toml", lambda: 'name = "x"\n#' + "x" * MAX_BYTES + "\n",
         TOO_LARGE, None),
]  # fmt: skip


def _write(case: Over, folder: Path) -> Path:
    path = folder / f"agent.{case.fmt}"
    path.write_text(case.text(), encoding="utf-8")
    return path


over = pytest.mark.parametrize("case", OVER, ids=[c.id for c in OVER])


@over
def test_a_file_over_a_bound_is_one_located_error_naming_the_limit(
    case: Over, tmp_path: Path
) -> None:
    path = _write(case, tmp_path)
    with pytest.raises(DefinitionError) as info:
        AgentDefinition.from_file(path)
    err = info.value
    assert (err.file, err.line) == (str(path), case.line)
    assert case.says in str(err)
    assert str(err).startswith(f"{path}:{case.line}: " if case.line else f"{path}: ")
    assert "\n" not in str(err)


@over
def test_check_reports_a_file_over_a_bound_in_one_line_and_exits_1(
    case: Over, tmp_path: Path
) -> None:
    path = _write(case, tmp_path)
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert isinstance(result.exception, SystemExit)  # a clean exit, not an escaped error
    assert (result.exit_code, result.output.count("\n")) == (1, 1)
    assert result.output.startswith(f"error: {path}") and case.says in result.output


@pytest.mark.parametrize("fmt", ["yaml", "json", "toml"])
def test_nesting_up_to_the_limit_loads_and_one_more_level_does_not(
    fmt: str, tmp_path: Path
) -> None:
    # the top mapping, tools, t and annotations are four levels: lists fill the rest
    def text(lists: int) -> str:
        nested = "[" * lists + "]" * lists
        if fmt == "yaml":
            return f"tools:\n  t:\n    annotations:\n      a: {nested}\n"
        if fmt == "toml":
            return f"[tools.t.annotations]\na = {nested}\n"
        return f'{{"tools": {{"t": {{"annotations": {{"a": {nested}}}}}}}}}'

    path = tmp_path / f"agent.{fmt}"
    path.write_text(text(MAX_DEPTH - 4), encoding="utf-8")
    definition = AgentDefinition.from_file(path)
    assert definition.tools["t"].annotations is not None
    path.write_text(text(MAX_DEPTH - 3), encoding="utf-8")
    with pytest.raises(DefinitionError, match=TOO_DEEP):
        AgentDefinition.from_file(path)


def test_ordinary_anchors_and_merge_keys_still_load(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "name: agent\n"
        "hooks:\n"
        "  PreToolUse:\n"
        "    - &rule {priority: 10, matcher: Bash,\n"
        "        hooks: [&deny {use: deny, with: {reason: no}}]}\n"
        "    - {<<: *rule, matcher: Write}\n"
        "  Stop:\n"
        "    - hooks: [*deny, *deny]\n"
    )
    guard = Guard(path, ledger=False)
    assert guard.sync.pre_tool_use("Write", {"file_path": "a"}).decision == "deny"
    assert len(guard.bindings["AgentStop"]) == 2


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_definition_that_never_ends_is_refused_unread_to_the_end(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.symlink_to("/dev/zero")
    with pytest.raises(DefinitionError, match=TOO_LARGE):
        AgentDefinition.from_file(path)
