"""What the shell and path guards share: the project root and the ``opaque`` option."""

from __future__ import annotations

import os
import posixpath
from typing import Any, Final

__all__ = ["OPAQUE_CHOICES", "check_opaque", "git_top", "project_root", "root_of"]

#: what a guard answers when it cannot see whether a call breaks it
OPAQUE_CHOICES: Final = ("deny", "ask", "allow")


def check_opaque(value: Any) -> str:
    """Validate the ``opaque`` option (a bad value is a configuration error naming it)."""
    if value not in OPAQUE_CHOICES:
        raise ValueError(f"opaque must be one of deny, ask, allow; got {value!r}")
    return str(value)


def project_root(event: Any, ctx: Any) -> str:
    """The project's root: ``$CLAUDE_PROJECT_DIR``, else the folder of the definition file,
    else the nearest folder above the event's ``cwd`` holding ``.git``, else that ``cwd``.

    Found without running git: a walk up the directories, a ``stat`` each.
    """
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    if env:
        return posixpath.normpath(os.path.abspath(env))
    source = getattr(getattr(ctx, "definition", None), "source", None)
    if isinstance(source, str) and source:
        return posixpath.dirname(os.path.abspath(source))
    return git_top(getattr(event, "cwd", None) or os.getcwd())


def root_of(cwd: str) -> str:
    """The project root without an event: ``$CLAUDE_PROJECT_DIR``, else the nearest folder
    above ``cwd`` holding ``.git``."""
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    if env:
        return posixpath.normpath(os.path.abspath(env))
    return git_top(cwd)


_TOPS: dict[str, str] = {}


def git_top(cwd: str) -> str:
    """The nearest folder at or above ``cwd`` holding ``.git``, else ``cwd`` itself.

    A long-lived process (``hookrails serve``) asks for the same folders again: an
    answer is remembered, and checked with one ``stat`` before it is used again.
    """
    known = _TOPS.get(cwd)
    if known is not None and (known == cwd or os.path.exists(posixpath.join(known, ".git"))):
        return known
    found = _walk_up(posixpath.normpath(os.path.abspath(cwd)))
    if len(_TOPS) < 256:
        _TOPS[cwd] = found
    return found


def _walk_up(cwd: str) -> str:
    here = cwd
    while True:
        if os.path.exists(posixpath.join(here, ".git")):
            return here
        parent = posixpath.dirname(here)
        if parent == here:
            return cwd
        here = parent
