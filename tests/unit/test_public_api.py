"""The public surface: ``guardrails`` and ``guardrails.builtins`` each have one table that
``__all__``, the lazy imports and the type checkers' imports agree with, and every error a
user can catch is exported."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from types import ModuleType

import pytest

import guardrails
import guardrails.builtins
from guardrails import errors


def _type_checking_imports(module: ModuleType) -> dict[str, str]:
    """``name -> module`` of the ``from .x import Name as Name`` lines under TYPE_CHECKING."""
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.level == 1:
                    for alias in stmt.names:
                        assert alias.asname == alias.name, f"{alias.name}: not re-exported"
                        found[alias.name] = str(stmt.module)
    return found


TABLES = {
    "guardrails": (guardrails, guardrails._WHERE, {"__version__"}),
    "guardrails.builtins": (guardrails.builtins, guardrails.builtins._EXPORTS, {"BUILTINS"}),
}


@pytest.mark.parametrize("name", list(TABLES))
def test_all_is_the_table(name: str) -> None:
    module, table, extra = TABLES[name]
    assert module.__all__ == sorted({*table, *extra})


@pytest.mark.parametrize("name", list(TABLES))
def test_type_checking_imports_are_the_table(name: str) -> None:
    module, table, _ = TABLES[name]
    assert _type_checking_imports(module) == table


@pytest.mark.parametrize("name", list(TABLES))
def test_every_public_name_loads_from_its_module(name: str) -> None:
    module, table, _ = TABLES[name]
    for attr, where in table.items():
        home = importlib.import_module(f"{module.__name__}.{where}")
        assert getattr(module, attr) is getattr(home, attr), attr


def test_every_error_a_user_can_catch_is_exported() -> None:
    raised = {
        name
        for name, obj in vars(errors).items()
        if inspect.isclass(obj) and issubclass(obj, errors.GuardrailsError)
    }
    assert raised <= set(guardrails.__all__)


def test_located_errors_read_file_line_message() -> None:
    for cls in (errors.SettingsError, errors.TranscriptError, errors.DefinitionError):
        assert issubclass(cls, errors.LocatedError)
        err = cls("bad value", file="a.yaml", line=3)
        assert str(err) == "a.yaml:3: bad value"
        assert (err.file, err.line, err.message) == ("a.yaml", 3, "bad value")
    assert str(errors.LocatedError("no file known")) == "no file known"


def test_builtins_references_point_at_their_classes() -> None:
    for name, ref in guardrails.builtins.BUILTINS.items():
        module, cls = ref.split(":")
        assert inspect.isclass(getattr(importlib.import_module(module), cls)), name
