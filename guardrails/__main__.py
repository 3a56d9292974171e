"""``python -m guardrails`` runs the ``hookrails`` CLI."""

from ._entry import main

if __name__ == "__main__":
    main()
