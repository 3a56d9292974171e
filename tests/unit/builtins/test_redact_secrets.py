"""``redact_secrets``: the model reads tool results with secrets masked, in the same shape.

The patterns themselves are tested in ``test_redact.py``; here, a few kinds
end to end, nested outputs, what ``run_tool`` callers get, and clean outputs
left alone.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, DefinitionError, Guard, Ledger
from guardrails.builtins import RedactSecrets, redact_secrets
from guardrails.results import UNSET
from guardrails.testing import SpyTool, make_event
from tests._guards import build_guard

GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
ANTHROPIC = "sk-ant-" + "api03-" + "x" * 30
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----"


def guard(hook: Any = redact_secrets, ledger: Ledger | None = None) -> Guard:
    return build_guard({"PostToolUse": [hook]}, ledger=ledger)


def post(output: Any, hook: Any = redact_secrets) -> Any:
    """What the hook answers for a PostToolUse carrying ``output``."""
    event = make_event("PostToolUse", tool_name="Bash", tool_input={}, tool_response=output)
    return hook(event, None)


@pytest.mark.parametrize(
    ("output", "secret", "mask"),
    [
        (f"cloned with token {GITHUB}", GITHUB, "[REDACTED:github]"),
        (f"aws_access_key_id = {AWS}", AWS, "[REDACTED:aws_access_key]"),
        (f"export ANTHROPIC_API_KEY={ANTHROPIC}", ANTHROPIC, "[REDACTED:"),
        ("DB_PASSWORD=hunter2-correct-horse", "hunter2-correct-horse", "[REDACTED:env_key]"),
        (f"key file:\n{PEM}\n", "MIIEow", "[REDACTED:private_key]"),
        ("postgres://app:s3cr3tpw@db:5432/app", "s3cr3tpw", "[REDACTED:url_password]"),
    ],
)
def test_a_secret_in_a_string_result_is_masked(output: str, secret: str, mask: str) -> None:
    result = post(output)
    assert isinstance(result.updated_output, str)
    assert secret not in result.updated_output and mask in result.updated_output


def test_a_dict_result_keeps_its_keys_and_other_values() -> None:
    output = {"stdout": f"token={GITHUB}\n", "stderr": "", "interrupted": False, "code": 0}
    redacted = post(output).updated_output
    assert redacted == {
        "stdout": "token=[REDACTED:env_key]\n",
        "stderr": "",
        "interrupted": False,
        "code": 0,
    }


def test_secrets_nested_in_lists_and_dicts_are_masked() -> None:
    output = {
        "content": [
            {"type": "text", "text": "issue body"},
            {"type": "text", "text": f"ci log: {AWS}"},
        ],
        "meta": {"headers": {"Authorization": "Bearer abcdef1234567890"}},
    }
    redacted = post(output).updated_output
    assert redacted["content"][0] == {"type": "text", "text": "issue body"}
    assert redacted["content"][1]["text"] == "ci log: [REDACTED:aws_access_key]"
    assert redacted["meta"]["headers"]["Authorization"] == "[REDACTED:field]"


def test_the_original_output_is_not_mutated() -> None:
    output = {"stdout": f"{GITHUB}"}
    post(output)
    assert output == {"stdout": GITHUB}


@pytest.mark.parametrize(
    "output",
    [
        "total 8\n-rw-r--r-- 1 me me 12 report.md\n",
        {"stdout": "3 passed", "stderr": "", "max_tokens": 4096},
        ["sk-learn is a library", "password policy: 8 chars"],
        42,
        None,
        b"AKIAIOSFODNN7EXAMPLE bytes are not scanned",
    ],
)
def test_a_clean_result_is_left_alone(output: Any) -> None:
    assert post(output) is None


def test_run_tool_callers_get_the_redacted_output() -> None:
    run = guard().sync.run_tool(
        "Bash", {"command": "env"}, SpyTool({"stdout": f"GITHUB_TOKEN={GITHUB}"})
    )
    assert run.output == {"stdout": "GITHUB_TOKEN=[REDACTED:env_key]"}
    assert GITHUB not in run.for_model()


def test_a_clean_result_reaches_the_caller_unrewritten() -> None:
    g = guard()
    d = g.sync.post_tool_use("Bash", {"command": "ls"}, "a.txt b.txt")
    assert d.updated_output is UNSET
    assert [(r.hook, r.outcome) for r in d.runs] == [("redact_secrets", "noop")]


def test_a_redaction_is_recorded_as_a_modify_in_the_ledger(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    guard(ledger=Ledger(db)).sync.run_tool("Bash", {"command": "env"}, SpyTool(f"T={GITHUB}"))
    conn = sqlite3.connect(db)
    outcome = conn.execute(
        "SELECT outcome FROM hook_runs WHERE hook = 'redact_secrets' AND event = 'PostToolUse'"
    ).fetchone()
    conn.close()
    assert outcome == ("modify",)


def test_extra_patterns_mask_what_the_built_ins_do_not_know() -> None:
    hook = RedactSecrets(patterns=[r"ACME-[0-9]{6}", r"pin: (?P<secret>\d{4})"])
    assert post("order ACME-123456 and pin: 1234", hook).updated_output == (
        "order [REDACTED:custom] and pin: [REDACTED:custom]"
    )


def test_a_custom_mask_is_used() -> None:
    assert post(f"t {GITHUB}", RedactSecrets(mask="<{kind}>")).updated_output == "t <github>"


def test_other_events_are_ignored() -> None:
    event = make_event("PreToolUse", tool_name="Bash", tool_input={"command": GITHUB})
    assert redact_secrets(event, None) is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"patterns": "ACME-\\d+"}, "patterns must be a list of regexes"),
        ({"patterns": ["("]}, "patterns: invalid regex '('"),
        ({"patterns": [42]}, "patterns: 42 is not a regex string"),
        ({"mask": "REDACTED"}, "invalid redaction mask"),
    ],
)
def test_bad_configuration_is_a_value_error_naming_the_parameter(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as exc:
        RedactSecrets(**kwargs)
    assert message in str(exc.value)


def test_declared_by_name_in_a_file_masks_results(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("hooks:\n  PostToolUse:\n    - hooks: [redact_secrets]\n", encoding="utf-8")
    run = Guard(path).sync.run_tool("Bash", {"command": "env"}, SpyTool(f"t {GITHUB}"))
    assert run.output == "t [REDACTED:github]"


def test_declared_with_params_in_a_file_uses_the_extra_patterns(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "hooks:\n  PostToolUse:\n    - hooks:\n        - use: redact_secrets\n"
        "          with: {patterns: ['ACME-[0-9]{6}']}\n",
        encoding="utf-8",
    )
    run = Guard(path).sync.run_tool("Bash", {"command": "x"}, SpyTool("id ACME-654321"))
    assert run.output == "id [REDACTED:custom]"


def test_a_bad_pattern_in_a_file_is_a_definition_error(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "hooks:\n  PostToolUse:\n    - hooks:\n        - use: redact_secrets\n"
        "          with: {patterns: ['(unclosed']}\n",
        encoding="utf-8",
    )
    with pytest.raises(DefinitionError) as exc:
        AgentDefinition.from_file(path)
    assert str(path) in str(exc.value) and "invalid regex '(unclosed'" in str(exc.value)
