"""The ``hookrails`` console script."""

from __future__ import annotations


def main() -> None:
    from .cli import main as cli_main

    cli_main()
