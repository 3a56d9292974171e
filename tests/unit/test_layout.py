"""The house rules of the package's shape: modules readable in one sitting, folders that
import each other without a cycle, and SQL only in the ledger package."""

from __future__ import annotations

import ast
import re

import pytest

from tools import layout

#: a string that is an SQL statement against a table (not the word "select" in prose)
SQL = re.compile(
    r"^\s*(select\b.*\bfrom|insert\s+(or\s+\w+\s+)?into|update\s+\w+\s+set|delete\s+from"
    r"|create\s+(table|view|index))\b",
    re.IGNORECASE | re.DOTALL,
)


def test_no_module_is_over_700_lines() -> None:
    assert [(n, name) for n, name in layout.line_counts() if n > 700] == []


def test_folders_import_each_other_without_a_cycle() -> None:
    assert layout.cycles(layout.folder_graph()) == []


def test_the_core_and_the_definition_depend_on_nothing_above_them() -> None:
    graph = layout.folder_graph()
    assert graph[layout.CORE] == set()
    assert graph["definition"] == {layout.CORE}
    assert "dispatch" not in graph["ledger"]


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


@pytest.mark.parametrize("module", sorted(m for m in layout.modules() if ".ledger" not in m))
def test_sql_lives_only_in_the_ledger_package(module: str) -> None:
    path = layout.modules()[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert [(line, s[:60]) for line, s in _strings(tree) if SQL.match(s)] == []


def test_the_sql_check_finds_sql() -> None:
    source = 'def f():\n    """select x from y"""\n\nQ = "SELECT d FROM events WHERE id = ?"\n'
    assert [line for line, s in _strings(ast.parse(source)) if SQL.match(s)] == [4]
