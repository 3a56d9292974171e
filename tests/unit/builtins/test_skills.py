"""``skill_discovery``: the prompt is matched against a skills folder and the best fits injected."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, Decision, DefinitionError, Guard
from guardrails.builtins import SkillDiscovery
from guardrails.builtins import skills as _skills
from guardrails.testing import make_event
from tests._guards import build_guard

SKILLS = {
    "pdf/SKILL.md": """\
---
name: pdf
description: Extract text and tables from PDF documents, fill PDF forms, merge and split PDFs.
keywords: [pdf, acrobat, form filling]
globs: ["*.pdf"]
---
# PDF
Use pypdf.
""",
    "xlsx/SKILL.md": """\
---
name: xlsx
description: Read, write and chart spreadsheets (Excel workbooks, CSV) keeping formulas intact.
keywords: [excel, spreadsheet]
globs: ["data/**/*.csv", "*.xlsx"]
---
""",
    "git-workflow/SKILL.md": """\
---
name: git-workflow
description: Branching, rebasing and commit messages for this repository's pull requests.
---
""",
    "docker.md": """\
---
name: docker
description: Build and run the service's container images with the compose file.
keywords: "docker, compose"
---
""",
    "broken/SKILL.md": """\
---
name: [unclosed
description: never parsed
---
""",
    "README.md": "# Our skills\nNot a skill: no front matter.\n",
}


def write_skills(root: Path, skills: dict[str, str] = SKILLS) -> Path:
    folder = root / ".claude" / "skills"
    for rel, text in skills.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_skills(tmp_path)
    return tmp_path


def make_guard(project: Path, hook: SkillDiscovery | None = None) -> Guard:
    return build_guard({"UserPromptSubmit": [hook or SkillDiscovery()]}, cwd=project)


def prompt(g: Guard, text: str) -> Decision:
    return g.sync.user_prompt_submit(text)


def names(d: Decision) -> list[str]:
    """The skills listed in the injection, in order."""
    text = d.additional_context or ""
    return [line[2:].split(" (", 1)[0] for line in text.splitlines() if line.startswith("- ")]


def test_a_keyword_in_the_prompt_injects_the_skill_with_its_path_and_why(project: Path) -> None:
    d = prompt(make_guard(project), "Please merge these into one PDF")
    assert names(d) == ["pdf"]
    line = (d.additional_context or "").splitlines()[1]
    assert line.startswith(
        "- pdf (.claude/skills/pdf/SKILL.md): Extract text and tables from PDF documents"
    )
    assert line.endswith('[matched keyword "pdf"; description "merge"]')


def test_the_injection_says_where_the_skills_come_from(project: Path) -> None:
    d = prompt(make_guard(project), "convert the excel sheet")
    assert (d.additional_context or "").splitlines()[0] == (
        "Skills matching this prompt (skill_discovery, from .claude/skills; "
        "each SKILL.md holds the skill's instructions):"
    )
    assert [i.hook for i in d.injections] == ["skill_discovery"]


def test_a_multi_word_keyword_matches_as_a_phrase(project: Path) -> None:
    hook = SkillDiscovery()
    skills, _ = hook.skills(str(project / ".claude" / "skills"))
    whys = {m.skill.name: m.why for m in hook.rank("help with form filling", skills)}
    assert 'keyword "form filling"' in whys["pdf"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What is in invoice.pdf?", ["pdf"]),
        ("Summarise ./data/2026/sales.csv", ["xlsx"]),
        ("open budget.xlsx", ["xlsx"]),
    ],
)
def test_a_file_path_in_the_prompt_matches_the_skill_globs(
    project: Path, text: str, expected: list[str]
) -> None:
    assert names(prompt(make_guard(project), text)) == expected


def test_a_glob_with_a_folder_is_anchored_at_the_cwd(project: Path) -> None:
    text = prompt(make_guard(project), "load reports/sales.csv").additional_context or ""
    assert '[matched description "csv"]' in text and "file reports/sales.csv" not in text


def test_an_absolute_path_under_the_cwd_is_matched_relative_to_it(project: Path) -> None:
    d = prompt(make_guard(project), f"read {project}/data/q1.csv please")
    assert names(d) == ["xlsx"] and "file data/q1.csv" in (d.additional_context or "")


def test_name_words_match(project: Path) -> None:
    d = prompt(make_guard(project), "which git commands do I need?")
    assert names(d) == ["git-workflow"] and 'name "git"' in (d.additional_context or "")


def test_description_words_match_across_word_forms(project: Path) -> None:
    d = prompt(make_guard(project), "I rebased and need a better commit message")
    assert names(d) == ["git-workflow"]
    assert 'description "commit", "messages", "rebasing"' in (d.additional_context or "")


def test_a_loose_md_file_with_front_matter_is_a_skill(project: Path) -> None:
    assert names(prompt(make_guard(project), "the compose file is broken")) == ["docker"]


def test_keywords_outrank_names_and_names_outrank_descriptions(tmp_path: Path) -> None:
    write_skills(
        tmp_path,
        {
            "a/SKILL.md": "---\nname: alpha\ndescription: about charts\n---\n",
            "b/SKILL.md": "---\nname: charts\ndescription: something\n---\n",
            "c/SKILL.md": "---\nname: gamma\ndescription: other\nkeywords: [charts]\n---\n",
        },
    )
    assert names(prompt(make_guard(tmp_path), "make charts")) == ["gamma", "charts", "alpha"]


def test_only_the_top_skills_are_injected(project: Path) -> None:
    text = "pdf excel docker git"
    assert len(names(prompt(make_guard(project, SkillDiscovery(top=2)), text))) == 2
    assert len(names(prompt(make_guard(project, SkillDiscovery(top=5)), text))) == 4


def test_min_score_drops_weak_matches(project: Path) -> None:
    weak = "I need to chart the quarterly numbers"  # one description word of xlsx
    assert names(prompt(make_guard(project), weak)) == ["xlsx"]
    assert names(prompt(make_guard(project, SkillDiscovery(min_score=2)), weak)) == []


def test_nothing_is_injected_when_nothing_matches(project: Path) -> None:
    g = make_guard(project)
    prompt(g, "hello")  # the broken skill's one-time report
    d = prompt(g, "What's the weather like in Lisbon?")
    assert d.additional_context is None and d.system_messages == [] and not d.blocked
    assert [(r.hook, r.outcome) for r in d.runs] == [("skill_discovery", "noop")]


def test_a_malformed_skill_is_skipped_and_reported_once(project: Path) -> None:
    g = make_guard(project)
    first = prompt(g, "fill the PDF form")
    assert names(first) == ["pdf"] and not first.blocked
    assert len(first.system_messages) == 1
    assert first.system_messages[0].startswith(
        "skill_discovery skipped .claude/skills/broken/SKILL.md: invalid YAML front matter "
        "at line 3: "
    )
    assert prompt(g, "fill the PDF form").system_messages == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no front matter\n", "no YAML front matter"),
        ("---\nname: x\ndescription: y\n", "no closing '---'"),
        ("---\n- a list\n---\n", "not a mapping"),
        ("---\nname: x\n---\n", "description is missing"),
        ("---\nname: 3\ndescription: y\n---\n", "name must be a non-empty string"),
        ("---\ndescription: y\nkeywords: {a: 1}\n---\n", "keywords must be a list of strings"),
        ("---\ndescription: y\nglobs: ['" + "{a,b}" * 11 + "']\n---\n", "globs: invalid glob"),
    ],
)
def test_each_kind_of_malformed_skill_is_reported(tmp_path: Path, text: str, problem: str) -> None:
    write_skills(tmp_path, {"bad/SKILL.md": text})
    d = prompt(make_guard(tmp_path), "anything")
    assert len(d.system_messages) == 1 and problem in d.system_messages[0]


def test_an_unreadable_skill_never_fails_the_prompt(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(_skills, "parse_skill", explode)
    d = prompt(make_guard(project), "fill the PDF form")
    assert not d.blocked and d.additional_context is None
    assert "cannot read it (RuntimeError: boom)" in d.system_messages[0]


def test_a_missing_folder_injects_nothing(tmp_path: Path) -> None:
    d = prompt(make_guard(tmp_path), "fill the PDF form")
    assert d.additional_context is None and not d.blocked


def test_a_long_description_is_cut_and_the_injection_stays_compact(tmp_path: Path) -> None:
    long = "charts " + "with many more words " * 100
    write_skills(
        tmp_path,
        {f"s{i}/SKILL.md": f"---\nname: s{i}\ndescription: {long}\n---\n" for i in range(5)},
    )
    d = prompt(make_guard(tmp_path), "charts")
    lines = (d.additional_context or "").splitlines()
    assert len(lines) == 4 and all(len(line) < 320 for line in lines)
    assert lines[1].split("): ", 1)[1].split(" [matched")[0].endswith("…")


class CountingParse:
    def __init__(self) -> None:
        self.paths: list[str] = []
        self.real = _skills.parse_skill

    def __call__(self, path: str, *args: Any, **kwargs: Any) -> Any:
        self.paths.append(os.path.basename(os.path.dirname(path)) + "/" + os.path.basename(path))
        return self.real(path, *args, **kwargs)


def test_the_folder_is_parsed_once_while_nothing_changes(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = CountingParse()
    monkeypatch.setattr(_skills, "parse_skill", counter)
    g = make_guard(project)
    prompt(g, "pdf")
    parsed = len(counter.paths)
    prompt(g, "excel")
    prompt(g, "docker")
    assert parsed == 6 and len(counter.paths) == parsed


def test_a_changed_skill_file_is_read_again(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counter = CountingParse()
    monkeypatch.setattr(_skills, "parse_skill", counter)
    g = make_guard(project)
    assert names(prompt(g, "kubernetes")) == []
    skill = project / ".claude" / "skills" / "docker" / "SKILL.md"
    skill.parent.mkdir()
    skill.write_text("---\nname: k8s\ndescription: Deploy to kubernetes clusters.\n---\n")
    pdf = project / ".claude" / "skills" / "pdf" / "SKILL.md"
    pdf.write_text(pdf.read_text().replace("keywords: [pdf,", "keywords: [kubernetes, pdf,"))
    stat = pdf.stat()
    os.utime(pdf, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    counter.paths.clear()
    assert names(prompt(g, "kubernetes")) == ["pdf", "k8s"]
    assert sorted(counter.paths) == ["docker/SKILL.md", "pdf/SKILL.md"]


def test_a_relative_folder_resolves_against_the_definition_file(tmp_path: Path) -> None:
    write_skills(tmp_path / "config", {"pdf/SKILL.md": SKILLS["pdf/SKILL.md"]})
    path = tmp_path / "config" / "agent.yaml"
    path.write_text("hooks:\n  UserPromptSubmit:\n    - hooks: [skill_discovery]\n")
    work = tmp_path / "work"
    work.mkdir()
    d = Guard(path, cwd=str(work)).sync.user_prompt_submit("a pdf please")
    assert names(d) == ["pdf"]


def test_without_a_definition_file_the_folder_resolves_against_the_cwd(project: Path) -> None:
    hook = SkillDiscovery(folder="custom")
    event = make_event("UserPromptSubmit", prompt="x", cwd=str(project))
    ctx = type("Ctx", (), {"definition": AgentDefinition()})()
    assert hook.folder_for(event, ctx) == str(project / "custom")


def test_declared_with_params_in_a_file(tmp_path: Path) -> None:
    write_skills(tmp_path, {"pdf/SKILL.md": SKILLS["pdf/SKILL.md"]})
    (tmp_path / ".claude" / "skills").rename(tmp_path / "skills")
    path = tmp_path / "agent.yaml"
    path.write_text(
        "hooks:\n  UserPromptSubmit:\n    - hooks:\n        - use: skill_discovery\n"
        "          with: {folder: skills, top: 1, min_score: 3}\n"
    )
    g = Guard(path, cwd=str(tmp_path))
    assert names(g.sync.user_prompt_submit("merge the PDF")) == ["pdf"]
    assert names(g.sync.user_prompt_submit("merge these")) == []


def test_a_bad_parameter_in_a_file_is_a_definition_error(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "hooks:\n  UserPromptSubmit:\n    - hooks:\n        - use: skill_discovery\n"
        "          with: {top: 0}\n"
    )
    with pytest.raises(DefinitionError) as exc:
        AgentDefinition.from_file(path)
    assert str(path) in str(exc.value) and "top must be an integer from 1 to 20" in str(exc.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"folder": ""}, "folder must be a non-empty path"),
        ({"folder": 3}, "folder must be a non-empty path"),
        ({"top": 0}, "top must be an integer from 1 to 20"),
        ({"top": True}, "top must be an integer from 1 to 20"),
        ({"min_score": 0}, "min_score must be a positive number"),
    ],
)
def test_bad_configuration_is_a_value_error_naming_the_parameter(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as exc:
        SkillDiscovery(**kwargs)
    assert message in str(exc.value)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("spreadsheets", "spreadsheet"),
        ("rebasing", "rebase"),
        ("committed", "commit"),
        ("libraries", "library"),
        ("merging", "merges"),
        ("boxes", "box"),
    ],
)
def test_word_forms_fold_together(a: str, b: str) -> None:
    assert _skills._stem(a) == _skills._stem(b)


@pytest.mark.parametrize(("a", "b"), [("form", "format"), ("status", "stat"), ("pass", "pa")])
def test_different_words_stay_apart(a: str, b: str) -> None:
    assert _skills._stem(a) != _skills._stem(b)


def test_the_ready_instance_has_the_defaults() -> None:
    from guardrails.builtins.skills import skill_discovery

    assert (skill_discovery.folder, skill_discovery.top) == (".claude/skills", 3)
