"""Where the repository's files are, for tests at any depth of ``tests/``."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES_DIR = REPO / "tests" / "fixtures"
