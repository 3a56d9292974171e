"""``python -m guardrails`` runs the ``hookrails`` CLI."""

from .cli.entry import main

if __name__ == "__main__":
    main()
