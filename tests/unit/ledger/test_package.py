"""``guardrails.ledger``'s lazy public surface."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import guardrails.ledger as ledger


def test_importing_the_package_imports_nothing_else() -> None:
    code = (
        "import sys, guardrails.ledger\n"
        "print(sorted(m for m in sys.modules if m.startswith('guardrails.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # the package root brings its version module, nothing more
    assert out.stdout.strip() == "['guardrails._version', 'guardrails.ledger']"


@pytest.mark.parametrize("name", ledger.__all__)
def test_every_public_name_resolves_to_its_module(name: str) -> None:
    value = getattr(ledger, name)
    home = importlib.import_module(f"guardrails.ledger.{ledger._PUBLIC[name]}")
    assert value is getattr(home, name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        ledger.no_such_name  # type: ignore[attr-defined]  # noqa: B018
