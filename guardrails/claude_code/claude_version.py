"""The Claude Code version ``install`` writes for, and a check of the ``claude`` on ``PATH``.

The handlers ``install`` writes rely on fields older Claude Code versions do
not know; such a version drops them without a word:

* ``onFailure`` (a hook Claude cannot run, or that crashes, refuses the call
  instead of letting it through): absent from Claude Code's CHANGELOG up to
  2.1.240 and from the CLI 2.1.240 that claude-agent-sdk 0.2.143 bundles,
  present in 2.1.332 (claude-agent-sdk 0.2.189), where the project's real-CLI
  tests check it. No version in between was available to test, so 2.1.332 is
  the minimum hookrails states.
* ``args`` (exec form, 2.1.139), ``if`` (2.1.85; compound commands 2.1.89),
  ``async``, ``statusMessage`` and the ``PostToolBatch`` event (present in
  2.1.332, not in the CHANGELOG up to 2.1.240): all older than or as old as
  2.1.332 as far as known.

The check never fails an install: the Claude Code that reads the settings may
not be the one on this ``PATH`` (another machine, the SDK's bundled CLI).
"""

from __future__ import annotations

import re

__all__ = ["MIN_VERSION", "check_claude_version", "parse_version"]

#: the oldest Claude Code hookrails' settings are known to work with (see above)
MIN_VERSION = (2, 1, 332)
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def parse_version(text: str) -> tuple[int, int, int] | None:
    """The first ``X.Y.Z`` in ``claude --version``'s output (``2.1.332 (Claude Code)``)."""
    found = _VERSION.search(text)
    if found is None:
        return None
    major, minor, patch = (int(g) for g in found.groups())
    return major, minor, patch


def check_claude_version(timeout: float = 10.0) -> str | None:
    """A warning when the ``claude`` on ``PATH`` is older than :data:`MIN_VERSION` or its
    version cannot be told; ``None`` when it is recent enough or there is none on ``PATH``
    (the settings may be for another machine: nothing to say)."""
    import shutil
    import subprocess

    wanted = ".".join(map(str, MIN_VERSION))
    claude = shutil.which("claude")
    if claude is None:
        return None
    try:
        done = subprocess.run(
            [claude, "--version"],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        found = parse_version(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        found = None
    if found is None:
        return (
            f"could not tell the version of {claude} (`claude --version`); hookrails' hooks "
            f"need Claude Code {wanted} or newer, whose onFailure makes a hook that cannot "
            "run refuse the call"
        )
    if found < MIN_VERSION:
        shown = ".".join(map(str, found))
        return (
            f"{claude} is Claude Code {shown}; hookrails' hooks need {wanted} or newer: an "
            "older one ignores onFailure, so a hook that cannot run (hookrails missing, a "
            "crash, a timeout) lets the call through. Update Claude Code (`claude update`)"
        )
    return None
