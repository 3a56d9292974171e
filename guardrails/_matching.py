"""Matcher patterns: parsed and compiled once, specialised per subject.

Syntax (DESIGN §3): ``None``/``""``/``"*"`` match all; whole-string,
case-sensitive globs with ``* ? [..] {a,b}``; ``|`` between alternatives
(outside parentheses, brackets and braces); a leading ``!`` negates;
``Tool(glob)`` tests the tool's primary argument; ``re:<regex>`` full-matches.

``Pattern.specialize(subject)`` answers ``True``/``False`` when the subject
alone decides, else an ``ArgPredicate`` to test against the event's input; the
Guard caches that per (event, subject) so the hot path is one dict lookup.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Any, Final

from .errors import DefinitionError

__all__ = ["ArgPredicate", "ArgRule", "Pattern", "compile_glob", "split_alternatives"]

#: primary argument of Claude Code's built-in tools, and whether it is a path
BUILTIN_PRIMARY_ARGS: Final[dict[str, tuple[str, str]]] = {
    "Bash": ("command", "text"),
    "Read": ("file_path", "path"),
    "Write": ("file_path", "path"),
    "Edit": ("file_path", "path"),
    "MultiEdit": ("file_path", "path"),
    "NotebookEdit": ("notebook_path", "path"),
    "WebFetch": ("url", "text"),
    "WebSearch": ("query", "text"),
    "Glob": ("pattern", "text"),
    "Grep": ("pattern", "text"),
    "Agent": ("subagent_type", "text"),
    "Task": ("subagent_type", "text"),
}
PATH_ARG_NAMES: Final = frozenset({"file_path", "path", "notebook_path", "filename", "file"})

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}


def _check_balanced(text: str) -> None:
    stack: list[str] = []
    escaped = False
    for ch in text:
        if escaped:
            escaped = False
            continue
        if ch == "\\":
            escaped = True
        elif stack and stack[-1] == "[":
            if ch == "]":
                stack.pop()
        elif ch in _OPEN:
            stack.append(ch)
        elif ch in _CLOSE:
            if not stack or stack[-1] != _CLOSE[ch]:
                raise DefinitionError(f"unbalanced {ch!r} in pattern {text!r}")
            stack.pop()
    if stack:
        raise DefinitionError(f"unclosed {stack[-1]!r} in pattern {text!r}")


def split_alternatives(text: str) -> list[str]:
    """Split on ``|`` at depth 0: ``Read|Bash(curl * | sh)`` -> two alternatives."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    escaped = False
    for ch in text:
        if escaped:
            current.append(ch)
            escaped = False
            continue
        if ch == "\\":
            escaped = True
            current.append(ch)
        elif ch in _OPEN:
            depth += 1
            current.append(ch)
        elif ch in _CLOSE:
            depth -= 1
            current.append(ch)
        elif ch == "|" and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def compile_glob(glob: str, *, path: bool = False) -> re.Pattern[str]:
    """Compile a whole-string, case-sensitive glob with wcmatch.

    Name and text globs (fnmatch): ``*`` crosses ``/`` and matches a leading
    ``.``. Path globs: ``**`` crosses ``/``, ``*`` does not; dotfiles match.
    """
    if path:
        from wcmatch import glob as wglob

        flags = wglob.GLOBSTAR | wglob.BRACE | wglob.DOTGLOB | wglob.CASE | wglob.FORCEUNIX
        include, exclude = wglob.translate(glob, flags=flags)
    else:
        from wcmatch import fnmatch as wfn

        flags = wfn.BRACE | wfn.DOTMATCH | wfn.CASE | wfn.FORCEUNIX
        include, exclude = wfn.translate(glob, flags=flags)
    if exclude:  # pragma: no cover - NEGATE is never passed
        raise DefinitionError(f"unexpected exclusion in glob {glob!r}")
    return re.compile("|".join(include))


class ArgRule:
    """The ``(glob)`` part of ``Tool(glob)``, compiled for text and for path arguments.

    A relative path glob is anchored at the event's ``cwd``; its compiled form is
    cached per cwd (a session has one), so ``..`` in the glob resolves too.
    """

    __slots__ = ("_by_cwd", "_glob", "_path_re", "_text_re", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        text_globs = [source]
        if source.endswith(":*"):  # Claude's legacy prefix form: "npm run test:*"
            prefix = source[:-2]
            text_globs = [prefix, prefix + " *"]
        self._text_re = re.compile("|".join(compile_glob(g).pattern for g in text_globs))
        glob = posixpath.expanduser(source) if source.startswith("~") else source
        if glob.startswith("/"):
            glob = "/" + glob.lstrip("/")
        self._glob = glob
        self._by_cwd: dict[str, re.Pattern[str]] = {}
        # compiled now so a bad path glob fails at load time, not at the first call
        self._path_re = compile_glob(
            _normalize_glob(glob if glob.startswith("/") else "/" + glob), path=True
        )

    def _path_regex(self, cwd: str) -> re.Pattern[str]:
        if self._glob.startswith("/"):
            return self._path_re
        rx = self._by_cwd.get(cwd)
        if rx is None:
            from wcmatch import glob as wglob

            base = normalize_path(cwd or "/", "/").rstrip("/")
            anchored = _normalize_glob(wglob.escape(base) + "/" + self._glob)
            rx = self._by_cwd[cwd] = compile_glob(anchored, path=True)
        return rx

    def matches(self, value: Any, kind: str, cwd: str) -> bool:
        if not isinstance(value, str):
            return False
        if kind != "path":
            return self._text_re.fullmatch(value) is not None
        return self._path_regex(cwd).fullmatch(normalize_path(value, cwd)) is not None


def normalize_path(value: str, cwd: str) -> str:
    """Absolute, ``..``-resolved POSIX path (lexical: no filesystem access)."""
    value = value.replace("\\", "/")
    if value.startswith("~"):
        value = posixpath.expanduser(value)
    if not value.startswith("/"):
        value = posixpath.join(cwd.replace("\\", "/") or "/", value)
    return posixpath.normpath(value).replace("//", "/")


def _normalize_glob(glob: str) -> str:
    """Resolve ``.``/``..`` segments in a glob without touching wildcards."""
    parts: list[str] = []
    for seg in glob.split("/"):
        if seg == "..":
            if parts and parts[-1] not in ("", ".."):
                parts.pop()
            else:
                parts.append(seg)
        elif seg != "." or not parts:
            parts.append(seg)
    return "/".join(parts)


#: ``(primary_arg, kind)`` for a tool name, or ``None`` if it has none
ArgLookup = Callable[[str], "tuple[str, str] | None"]


class ArgPredicate:
    """Residual test on a tool event's input, for argument rules."""

    __slots__ = ("arg", "kind", "negate", "rules")

    def __init__(self, arg: str, kind: str, rules: list[ArgRule], negate: bool) -> None:
        self.arg = arg
        self.kind = kind
        self.rules = rules
        self.negate = negate

    def __call__(self, tool_input: dict[str, Any], cwd: str) -> bool:
        value = tool_input.get(self.arg)
        hit = any(r.matches(value, self.kind, cwd) for r in self.rules)
        return hit != self.negate


class _Alternative:
    __slots__ = ("arg", "name_re")

    def __init__(self, name_re: re.Pattern[str] | None, arg: ArgRule | None) -> None:
        self.name_re = name_re
        self.arg = arg


_ARG_RULE = re.compile(r"^([^()]*)\((.*)\)$", re.S)


class Pattern:
    """A compiled matcher string. Construction raises ``DefinitionError`` on bad syntax."""

    __slots__ = ("_alts", "_regex", "match_all", "negate", "source")

    def __init__(self, source: str | None) -> None:
        self.source = source or ""
        self.match_all = source in (None, "", "*")
        self.negate = False
        self._regex: re.Pattern[str] | None = None
        self._alts: list[_Alternative] = []
        if self.match_all:
            return
        assert source is not None
        if not isinstance(source, str):
            raise DefinitionError(f"matcher must be a string, got {type(source).__name__}")
        if source.startswith("re:"):
            try:
                self._regex = re.compile(source[3:])
            except re.error as exc:
                raise DefinitionError(
                    f"invalid regex {source[3:]!r}: {exc}", expected="a Python regular expression"
                ) from None
            return
        body = source
        if body.startswith("!"):
            self.negate = True
            body = body[1:]
        if not body.strip():
            raise DefinitionError(
                f"empty pattern {source!r}", expected="a tool-name glob after '!'"
            )
        _check_balanced(body)
        for alt in split_alternatives(body):
            alt = alt.strip()
            if not alt:
                raise DefinitionError(
                    f"empty alternative in {source!r}", expected="names between '|'"
                )
            m = _ARG_RULE.match(alt)
            if m:
                name, arg = m.group(1).strip(), m.group(2)
                if not name:
                    raise DefinitionError(
                        f"argument rule {alt!r} has no tool name", expected="Tool(glob)"
                    )
                if not arg.strip():
                    raise DefinitionError(
                        f"argument rule {alt!r} has an empty glob", expected="Tool(glob)"
                    )
                name_re = None if name == "*" else compile_glob(name)
                self._alts.append(_Alternative(name_re, ArgRule(arg)))
            elif "(" in alt or ")" in alt:
                raise DefinitionError(
                    f"misplaced parenthesis in {alt!r}", expected="Tool(glob) or a name glob"
                )
            else:
                self._alts.append(_Alternative(compile_glob(alt), None))

    def __repr__(self) -> str:
        return f"Pattern({self.source!r})"

    @property
    def names(self) -> list[str]:
        """Tool-name globs of the alternatives (for ``check``'s unmatched warning)."""
        return [a.name_re.pattern if a.name_re else "*" for a in self._alts]

    @property
    def has_arg_rules(self) -> bool:
        return any(a.arg is not None for a in self._alts)

    def matches_name(self, subject: str) -> bool:
        """Could this pattern match ``subject`` for some input? (used by ``check``)."""
        if self.match_all:
            return True
        if self._regex is not None:
            return self._regex.fullmatch(subject) is not None
        hit = any(a.name_re is None or a.name_re.fullmatch(subject) for a in self._alts)
        return True if self.negate else hit

    def specialize(self, subject: str, arg_of: ArgLookup) -> bool | ArgPredicate:
        """Decide for ``subject``, or return the predicate still to test on the input."""
        if self.match_all:
            return True
        if self._regex is not None:
            return self._regex.fullmatch(subject) is not None
        rules: list[ArgRule] = []
        for alt in self._alts:
            if alt.name_re is not None and alt.name_re.fullmatch(subject) is None:
                continue
            if alt.arg is None:
                return not self.negate
            rules.append(alt.arg)
        if rules:
            spec = arg_of(subject)
            if spec is not None:
                return ArgPredicate(spec[0], spec[1], rules, self.negate)
        return self.negate

    def matches(
        self,
        subject: str,
        tool_input: dict[str, Any] | None = None,
        cwd: str = "",
        arg_of: ArgLookup | None = None,
    ) -> bool:
        """One-off match (the Guard uses ``specialize`` and caches instead)."""
        result = self.specialize(subject, arg_of or builtin_arg_of)
        if isinstance(result, ArgPredicate):
            return result(tool_input or {}, cwd)
        return result


def builtin_arg_of(tool: str) -> tuple[str, str] | None:
    return BUILTIN_PRIMARY_ARGS.get(tool)
