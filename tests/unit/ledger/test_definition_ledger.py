"""Where a Guard records and where ``hookrails ledger --config`` looks agree.

``Guard(path, ledger=...)`` against the definition's ``ledger:`` key and
``$HOOKRAILS_LEDGER``, in every combination: ``Ledger()`` takes the file the CLI
reads; a ``Ledger`` naming another file than the key is one error naming both; a
path given to the Guard (or ``Ledger(path, definition=...)``) overrides the key on
purpose.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from guardrails import AgentDefinition, DefinitionError, Guard, Ledger
from guardrails.cli.main import cli

#: what the Guard is given: a factory of (tmp folder, the loaded definition) -> ledger argument
ARGS: dict[str, Any] = {
    "Ledger()": lambda tmp, d: Ledger(),
    "Ledger(key's file)": lambda tmp, d: Ledger(tmp / "conf" / "." / "audit.db"),
    "Ledger(other)": lambda tmp, d: Ledger(tmp / "other.db"),
    "Ledger(other, definition=d)": lambda tmp, d: Ledger(tmp / "other.db", definition=d),
    "Ledger(definition=another)": lambda tmp, d: Ledger(definition=_another(tmp)),
    "'other.db' (a path)": lambda tmp, d: str(tmp / "other.db"),
    "True": lambda tmp, d: True,
    "None": lambda tmp, d: None,
    "False": lambda tmp, d: False,
}

#: (the definition has `ledger: audit.db`, $HOOKRAILS_LEDGER is set, argument) -> where the
#: Guard records: key, env, default, other, another, none, or error
CASES: list[tuple[bool, bool, str, str]] = [
    # no key, no $HOOKRAILS_LEDGER
    (False, False, "Ledger()", "default"),
    (False, False, "Ledger(other)", "other"),
    (False, False, "Ledger(other, definition=d)", "other"),
    (False, False, "Ledger(definition=another)", "another"),
    (False, False, "'other.db' (a path)", "other"),
    (False, False, "True", "default"),
    (False, False, "None", "none"),
    (False, False, "False", "none"),
    # the key, no $HOOKRAILS_LEDGER
    (True, False, "Ledger()", "key"),
    (True, False, "Ledger(key's file)", "key"),
    (True, False, "Ledger(other)", "error"),
    (True, False, "Ledger(other, definition=d)", "other"),
    (True, False, "Ledger(definition=another)", "error"),
    (True, False, "'other.db' (a path)", "other"),
    (True, False, "True", "key"),
    (True, False, "None", "key"),
    (True, False, "False", "none"),
    # no key, $HOOKRAILS_LEDGER
    (False, True, "Ledger()", "env"),
    (False, True, "Ledger(other)", "other"),
    (False, True, "'other.db' (a path)", "other"),
    (False, True, "True", "env"),
    (False, True, "None", "env"),
    # the key and $HOOKRAILS_LEDGER: the variable outranks the key everywhere
    (True, True, "Ledger()", "env"),
    (True, True, "Ledger(key's file)", "key"),
    (True, True, "Ledger(other)", "other"),
    (True, True, "Ledger(definition=another)", "env"),
    (True, True, "'other.db' (a path)", "other"),
    (True, True, "True", "env"),
    (True, True, "None", "env"),
]


def _another(tmp: Path) -> AgentDefinition:
    path = tmp / "another" / "agent.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text("name: another\nledger: another.db\n", encoding="utf-8")
    return AgentDefinition.from_file(path)


def _definition(tmp: Path, key: bool) -> Path:
    path = tmp / "conf" / "agent.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["name: agent", "ledger: audit.db" if key else "", "hooks: {}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _where(tmp: Path) -> dict[str, str | None]:
    return {
        "key": str(tmp / "conf" / "audit.db"),
        "env": str(tmp / "env.db"),
        "default": str(tmp / "cwd" / ".hookrails" / "ledger.db"),
        "other": str(tmp / "other.db"),
        "another": str(tmp / "another" / "another.db"),
        "none": None,
    }


@pytest.mark.parametrize(
    ("key", "env", "arg", "expected"),
    CASES,
    ids=[f"{'key' if k else 'no-key'}-{'env' if e else 'no-env'}-{a}" for k, e, a, _ in CASES],
)
def test_the_guard_records_where_the_definition_and_the_environment_say(
    key: bool, env: bool, arg: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    if env:
        monkeypatch.setenv("HOOKRAILS_LEDGER", str(tmp_path / "env.db"))
    config = _definition(tmp_path, key)
    definition = AgentDefinition.from_file(config)
    given = ARGS[arg](tmp_path, definition)
    where = _where(tmp_path)
    if expected == "error":
        with pytest.raises(DefinitionError) as caught:
            Guard(definition, ledger=given)
        message = str(caught.value)
        assert message.startswith(f"{config}:2: ledger: ")  # the `ledger:` key's line
        assert where["key"] in message and str(given.path) in message  # both files
        assert "pass Ledger() or ledger=True" in message
        given.close()
        return
    guard = Guard(definition, ledger=given)
    try:
        got = None if guard.ledger is None else guard.ledger.path
        assert got == where[expected]
        if guard.ledger is not None:
            guard.sync.user_prompt_submit("hello")
            assert Path(got or "").is_file()
    finally:
        if guard.ledger is not None:
            guard.ledger.close()
    if arg in ("Ledger()", "True", "None") and expected != "none":
        # no file named in code: the CLI finds the records with --config alone
        shown = CliRunner().invoke(cli, ["ledger", "path", "--config", str(config)])
        assert shown.exit_code == 0, shown.output
        assert shown.output.strip() == where[expected]
    if expected != "default":
        assert not (tmp_path / "cwd" / ".hookrails").exists()  # no stray default file


def test_a_ledger_without_a_path_opens_nothing_until_a_guard_or_a_use_chooses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ledger = Ledger()
    assert not (tmp_path / ".hookrails").exists()
    assert ledger.degraded is None  # asking opens it where it is
    assert (tmp_path / ".hookrails" / "ledger.db").is_file()
    ledger.close()


def test_a_ledger_used_before_a_guard_keeps_its_file_and_a_key_elsewhere_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ledger = Ledger()
    ledger.reader.close()  # in use at .hookrails/ledger.db
    definition = AgentDefinition.from_file(_definition(tmp_path, key=True))
    with pytest.raises(DefinitionError, match=r"audit\.db"):
        Guard(definition, ledger=ledger)
    ledger.close()


def test_one_ledger_shared_by_two_guards_follows_the_first_and_refuses_a_conflict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ledger = Ledger()
    first = Guard(AgentDefinition.from_file(_definition(tmp_path, key=True)), ledger=ledger)
    assert ledger.path == str(tmp_path / "conf" / "audit.db")
    Guard(AgentDefinition(name="no-key"), ledger=ledger)  # no key: no opinion
    with pytest.raises(DefinitionError, match=r"another\.db"):
        Guard(_another(tmp_path), ledger=ledger)
    assert first.ledger is ledger
    ledger.close()


def test_a_ledger_made_for_one_definition_object_is_checked_against_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = _definition(tmp_path, key=True)
    loaded_once = AgentDefinition.from_file(config)
    ledger = Ledger(tmp_path / "other.db", definition=loaded_once)
    with pytest.raises(DefinitionError):
        Guard(AgentDefinition.from_file(config), ledger=ledger)  # another load: not exempt
    ledger.close()


def test_the_environment_variable_set_after_ledger_is_made_still_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ledger = Ledger()
    monkeypatch.setenv("HOOKRAILS_LEDGER", os.fspath(tmp_path / "late.db"))
    Guard(AgentDefinition.from_file(_definition(tmp_path, key=True)), ledger=ledger)
    assert ledger.path == str(tmp_path / "late.db")
    ledger.close()
