"""``require_artifacts``: a stop is blocked until files (and ledger facts) exist.

Driven through real Guards' ``subagent_stop`` / ``agent_stop``, with files in a
temporary working directory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, Decision, DefinitionError, Guard, Ledger, Session
from guardrails.builtins import RequireArtifacts
from guardrails.testing import SpyTool
from tests._claude_cli import SUBAGENT_REPORT_FILE
from tests._guards import build_guard
from tests._paths import REPO

SCHEMA = {
    "type": "object",
    "required": ["findings"],
    "properties": {"findings": {"type": "array", "items": {"type": "string"}}},
}


def make_guard(hook: RequireArtifacts, cwd: Path, ledger: Ledger | None = None) -> Guard:
    return build_guard({"SubagentStop": [hook], "AgentStop": [hook]}, cwd=cwd, ledger=ledger)


def stop(g: Guard | Session, agent: str = "a1", **fields: Any) -> Decision:
    return g.sync.subagent_stop(agent, "researcher", **fields)


def test_a_missing_file_blocks_the_stop_with_retry_required(tmp_path: Path) -> None:
    d = stop(make_guard(RequireArtifacts(paths=["report.md"]), tmp_path))
    assert d.blocked
    assert (d.reason or "").startswith("Retry required: report.md missing.")


def test_a_present_file_lets_the_stop_through_and_says_what_was_found(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("x" * 1229)
    d = stop(make_guard(RequireArtifacts(paths=["report.md"]), tmp_path))
    assert not d.blocked
    assert d.system_messages == ["Report found: report.md (1.2 KB)"]
    assert [(r.hook, r.outcome) for r in d.runs] == [("require_artifacts", "allow")]


def test_an_empty_file_does_not_count(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("")
    d = stop(make_guard(RequireArtifacts(paths=["report.md"]), tmp_path))
    assert d.blocked and "report.md is empty" in (d.reason or "")


def test_a_glob_needs_one_non_empty_match(tmp_path: Path) -> None:
    g = make_guard(RequireArtifacts(paths=["reports/**/*.md"]), tmp_path)
    (tmp_path / "reports" / "2026").mkdir(parents=True)
    assert stop(g).blocked
    (tmp_path / "reports" / "2026" / "q1.md").write_text("# Q1")
    d = stop(g)
    assert not d.blocked and d.system_messages == ["Report found: reports/**/*.md (1 file, 4 B)"]


def test_a_trailing_slash_requires_a_file_below_the_folder(tmp_path: Path) -> None:
    g = make_guard(RequireArtifacts(paths=["out/"]), tmp_path)
    (tmp_path / "out" / "sub").mkdir(parents=True)
    assert stop(g).blocked
    (tmp_path / "out" / "sub" / "data.csv").write_text("a,b\n")
    assert not stop(g).blocked


def test_every_listed_artifact_is_required(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("ok")
    d = stop(make_guard(RequireArtifacts(paths=["report.md", "summary.md", "data.csv"]), tmp_path))
    assert (d.reason or "").startswith("Retry required: summary.md missing; data.csv missing.")


def test_paths_are_relative_to_the_event_cwd(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "report.md").write_text("ok")
    g = make_guard(RequireArtifacts(paths=["report.md"]), tmp_path)
    assert stop(g).blocked
    assert not stop(g, cwd=str(tmp_path / "elsewhere")).blocked


def test_an_absolute_glob_is_used_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "abs.md").write_text("ok")
    g = make_guard(RequireArtifacts(paths=[str(tmp_path / "abs.md")]), tmp_path / "nowhere")
    assert not stop(g).blocked


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"findings": ["a"]', "result.json is not valid JSON (Expecting ',' delimiter at line 1"),
        ('{"findings": "a"}', "result.json does not match its schema: $.findings: 'a' is not"),
        ('{"other": 1}', "result.json does not match its schema: $: 'findings' is a required"),
    ],
)
def test_a_json_artifact_that_is_broken_or_off_schema_counts_as_missing(
    tmp_path: Path, content: str, problem: str
) -> None:
    (tmp_path / "result.json").write_text(content)
    d = stop(make_guard(RequireArtifacts(schema={"result.json": SCHEMA}), tmp_path))
    assert d.blocked and problem in (d.reason or "")


def test_a_json_artifact_matching_its_schema_passes(tmp_path: Path) -> None:
    (tmp_path / "result.json").write_text(json.dumps({"findings": ["x", "y"]}))
    d = stop(make_guard(RequireArtifacts(schema={"result.json": SCHEMA}), tmp_path))
    assert not d.blocked and d.system_messages[0].startswith("Report found: result.json (")


def test_a_json_artifact_must_parse_even_without_a_schema(tmp_path: Path) -> None:
    (tmp_path / "data.json").write_text("{nope")
    d = stop(make_guard(RequireArtifacts(paths=["data.json"]), tmp_path))
    assert d.blocked and "data.json is not valid JSON" in (d.reason or "")


def test_one_broken_json_file_among_a_globs_matches_blocks(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"findings": []}')
    (tmp_path / "b.json").write_text('{"findings": [1]}')
    d = stop(make_guard(RequireArtifacts(paths=["*.json"], schema={"*.json": SCHEMA}), tmp_path))
    assert d.blocked and "b.json does not match its schema: $.findings[0]" in (d.reason or "")


def test_a_schema_file_is_read_relative_to_the_definition(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "result.json").write_text(json.dumps(SCHEMA))
    path = tmp_path / "agent.yaml"
    path.write_text(
        "hooks:\n  SubagentStop:\n    - hooks:\n        - use: require_artifacts\n"
        "          with: {schema: {'out/result.json': schemas/result.json}}\n",
        encoding="utf-8",
    )
    work = tmp_path / "work"
    (work / "out").mkdir(parents=True)
    (work / "out" / "result.json").write_text('{"findings": "not a list"}')
    g = Guard(path, cwd=str(work))
    assert "$.findings: 'not a list' is not of type 'array'" in (stop(g).reason or "")


def test_a_missing_schema_file_is_a_hook_failure_not_a_block(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text("{}")
    d = stop(make_guard(RequireArtifacts(schema={"r.json": "missing.json"}), tmp_path))
    assert not d.blocked
    assert [(r.hook, r.outcome) for r in d.runs] == [("require_artifacts", "error")]
    assert "missing.json" in (d.runs[0].error or "")


# --- ledger facts --------------------------------------------------------------------


def test_a_required_tool_must_have_succeeded_in_the_session(tmp_path: Path) -> None:
    g = make_guard(RequireArtifacts(tools=["run_tests"]), tmp_path, Ledger(tmp_path / "l.db"))
    s = g.session("s1")
    d = stop(s)
    assert d.blocked and "no successful run_tests call in this session" in (d.reason or "")
    s.sync.run_tool("run_tests", {}, SpyTool("3 passed"))
    d = stop(s)
    assert not d.blocked and d.system_messages == ["run_tests succeeded"]


def test_a_failed_call_of_the_required_tool_does_not_count(tmp_path: Path) -> None:
    g = make_guard(RequireArtifacts(tools=["run_*"]), tmp_path, Ledger(tmp_path / "l.db"))
    s = g.session("s1")
    s.sync.run_tool("run_tests", {}, SpyTool(error=RuntimeError("2 failed")))
    assert stop(s).blocked


def test_a_success_in_another_session_does_not_count(tmp_path: Path) -> None:
    g = make_guard(RequireArtifacts(tools=["run_tests"]), tmp_path, Ledger(tmp_path / "l.db"))
    g.session("other").sync.run_tool("run_tests", {}, SpyTool())
    assert stop(g.session("s1")).blocked


def test_tool_globs_follow_matcher_syntax(tmp_path: Path) -> None:
    hook = RequireArtifacts(tools=["{pytest,run_tests}"])
    s = make_guard(hook, tmp_path, Ledger(tmp_path / "l.db")).session("s1")
    s.sync.run_tool("pytest", {}, SpyTool())
    assert not stop(s).blocked


def test_files_and_tools_are_reported_together(tmp_path: Path) -> None:
    hook = RequireArtifacts(paths=["report.md"], tools=["run_tests"])
    s = make_guard(hook, tmp_path, Ledger(tmp_path / "l.db")).session("s1", cwd=str(tmp_path))
    (tmp_path / "report.md").write_text("ok")
    s.sync.run_tool("run_tests", {}, SpyTool())
    assert stop(s).system_messages == ["Report found: report.md (2 B); run_tests succeeded"]


def test_tools_without_a_ledger_fail_the_hook_with_a_clear_message(tmp_path: Path) -> None:
    d = stop(make_guard(RequireArtifacts(tools=["run_tests"]), tmp_path))
    assert not d.blocked  # stop events fail open by default
    assert "needs a ledger" in (d.runs[0].error or "")
    assert any("needs a ledger" in n for n in d.notes)


# --- retries -------------------------------------------------------------------------


def test_after_max_retries_the_stop_goes_through_with_a_system_message(tmp_path: Path) -> None:
    g = make_guard(RequireArtifacts(paths=["report.md"], max_retries=2), tmp_path)
    first, second, third = stop(g), stop(g), stop(g)
    assert (first.blocked, second.blocked, third.blocked) == (True, True, False)
    assert "Retry 2 of 2." in (second.reason or "")
    assert third.system_messages == [
        "require_artifacts: letting the stop through after 2 retries; still missing: "
        "report.md missing"
    ]


def test_the_retry_count_starts_again_after_a_stop_goes_through(tmp_path: Path) -> None:
    g = make_guard(RequireArtifacts(paths=["report.md"], max_retries=1), tmp_path)
    assert [stop(g).blocked for _ in range(4)] == [True, False, True, False]


def test_retries_are_counted_per_subagent(tmp_path: Path) -> None:
    g = make_guard(RequireArtifacts(paths=["report.md"], max_retries=1), tmp_path)
    assert stop(g, "a1").blocked and stop(g, "a2").blocked
    assert not stop(g, "a1").blocked


def test_the_main_agent_stop_is_checked_too(tmp_path: Path) -> None:
    g = make_guard(RequireArtifacts(paths=["report.md"]), tmp_path)
    assert g.sync.agent_stop("all done").blocked


def test_stop_hook_active_counts_as_one_earlier_block(tmp_path: Path) -> None:
    """A host continuing because of a stop hook: a fresh process must not start at zero."""
    g = make_guard(RequireArtifacts(paths=["report.md"], max_retries=1), tmp_path)
    assert not stop(g, stop_hook_active=True).blocked


def test_with_a_ledger_the_retry_count_survives_a_new_process(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    first = make_guard(RequireArtifacts(paths=["report.md"], max_retries=2), tmp_path, Ledger(db))
    assert stop(first.session("s1")).blocked and stop(first.session("s1")).blocked
    second = make_guard(RequireArtifacts(paths=["report.md"], max_retries=2), tmp_path, Ledger(db))
    d = stop(second.session("s1"))
    assert not d.blocked and "after 2 retries" in d.system_messages[0]


# --- configuration -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "nothing to require: give paths, schema or tools"),
        ({"paths": [""]}, "paths must be a list of non-empty globs"),
        ({"paths": {"a": 1}}, "paths must be a list of globs"),
        ({"tools": [3]}, "tools must be a list of non-empty globs"),
        ({"paths": ["{a,b}" * 11]}, "invalid glob"),
        ({"schema": ["x.json"]}, "schema must map artifact globs"),
        ({"schema": {"x.json": 3}}, "schema['x.json'] must be a JSON Schema mapping or a path"),
        ({"schema": {"x.json": {"type": "nope"}}}, "is not a valid JSON Schema"),
        ({"paths": ["a"], "max_retries": 0}, "max_retries must be an integer from 1 to 8"),
        ({"paths": ["a"], "max_retries": 9}, "max_retries must be an integer from 1 to 8"),
    ],
)
def test_bad_configuration_is_a_value_error_naming_the_parameter(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as exc:
        RequireArtifacts(**kwargs)
    assert message in str(exc.value)


def test_a_single_path_string_is_accepted() -> None:
    assert RequireArtifacts(paths="report.md").paths == ["report.md"]


def test_declared_with_params_in_a_file_blocks(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "hooks:\n  SubagentStop:\n    - matcher: researcher\n      hooks:\n"
        "        - use: require_artifacts\n          with: {paths: [report.md]}\n",
        encoding="utf-8",
    )
    d = stop(Guard(path, cwd=str(tmp_path)))
    assert d.blocked and (d.reason or "").startswith("Retry required: report.md missing")


def test_declared_without_params_in_a_file_is_a_definition_error(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("hooks:\n  SubagentStop:\n    - hooks: [require_artifacts]\n")
    with pytest.raises(DefinitionError) as exc:
        AgentDefinition.from_file(path)
    assert str(path) in str(exc.value) and "nothing to require" in str(exc.value)


def test_a_bad_parameter_in_a_file_is_a_definition_error(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "hooks:\n  SubagentStop:\n    - hooks:\n        - use: require_artifacts\n"
        "          with: {paths: [report.md], max_retries: 20}\n",
        encoding="utf-8",
    )
    with pytest.raises(DefinitionError) as exc:
        AgentDefinition.from_file(path)
    assert "max_retries must be an integer from 1 to 8" in str(exc.value)


# --- the artifacts hookrails' own definitions ask a subagent for ----------------------------


def _required_paths(definition: AgentDefinition) -> list[str]:
    found = []
    for matchers in definition.hooks.values():
        for matcher in matchers:
            for hook in matcher.hooks:
                if isinstance(hook, dict) and hook.get("use") == "require_artifacts":
                    found += RequireArtifacts(**hook.get("with", {})).paths
    return found


def _docs_tour() -> AgentDefinition:
    import yaml

    text = (REPO / "docs" / "builtins.md").read_text(encoding="utf-8")
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    return AgentDefinition.from_dict(yaml.safe_load(block))


@pytest.mark.parametrize(
    "definition",
    [
        pytest.param(lambda: __import__("guardrails.cli.demo_run").cli.demo_run.load_definition(),
                     id="hookrails demo"),
        pytest.param(lambda: AgentDefinition.from_file(REPO / "examples" / "agent.yaml"),
                     id="examples/agent.yaml"),
        pytest.param(_docs_tour, id="docs/builtins.md"),
    ],
)  # fmt: skip
def test_the_artifacts_we_show_are_ones_claude_code_lets_a_subagent_write(definition: Any) -> None:
    """Claude Code refuses a subagent's Write of REPORT*.md and the like before any hook
    runs, so a definition that asks for one would send the subagent back for a file it
    cannot write."""
    paths = _required_paths(definition())
    assert paths
    assert [p for p in paths if SUBAGENT_REPORT_FILE.match(Path(p).name)] == []
