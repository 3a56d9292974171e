"""Matcher patterns: parsed and compiled once, specialised per subject.

Syntax (docs/design.md §3): ``None``/``""``/``"*"`` match all; whole-string,
case-sensitive globs with ``* ? [..] {a,b}``; ``|`` between alternatives
(outside parentheses, brackets and braces); a leading ``!`` negates;
``Tool(glob)`` tests the tool's primary argument; ``re:<regex>`` full-matches.

``Pattern.specialize(subject)`` answers ``True``/``False`` when the subject
alone decides, else an ``ArgPredicate`` to test against the event's input; the
Guard caches that per (event, subject) so the hot path is one dict lookup.
"""

from __future__ import annotations

import functools
import posixpath
import re

from ..errors import DefinitionError

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Final, TypeAlias

    #: ``(primary_arg, kind)`` for a tool name, or ``None`` if it has none
    ArgLookup: TypeAlias = Callable[[str], tuple[str, str] | None]

__all__ = ["ArgPredicate", "ArgRule", "Pattern", "compile_glob", "split_alternatives", "structure"]

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

_CLOSE: Final = {")": "(", "}": "{"}
_ESCAPE: Final = "balanced (), {} and [], or a backslash before a literal one"


def structure(text: str) -> list[tuple[int, str, int]]:
    """The structural characters of ``text``: ``( ) { } |`` with their nesting depth.

    Escaped characters (``\\x``) and the inside of a ``[...]`` class are literal,
    as in the glob itself (``]`` right after ``[`` or ``[!`` belongs to the
    class). Raises ``DefinitionError`` on unbalanced ``()``/``{}`` or an
    unclosed ``[``.
    """
    found: list[tuple[int, str, int]] = []
    stack: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            j = i + 1
            if j < n and text[j] in "!^":
                j += 1
            if j < n and text[j] == "]":
                j += 1
            while j < n and text[j] != "]":
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise DefinitionError(f"unclosed '[' in pattern {text!r}", expected=_ESCAPE)
            i = j + 1
            continue
        if ch in "({":
            found.append((i, ch, len(stack)))
            stack.append(ch)
        elif ch in _CLOSE:
            if not stack or stack[-1] != _CLOSE[ch]:
                raise DefinitionError(f"unbalanced {ch!r} in pattern {text!r}", expected=_ESCAPE)
            stack.pop()
            found.append((i, ch, len(stack)))
        elif ch == "|":
            found.append((i, ch, len(stack)))
        i += 1
    if stack:
        raise DefinitionError(f"unclosed {stack[-1]!r} in pattern {text!r}", expected=_ESCAPE)
    return found


def split_alternatives(text: str) -> list[str]:
    """Split on ``|`` at depth 0: ``Read|Bash(curl * | sh)`` -> two alternatives.

    ``|`` inside ``(...)``, ``{...}``, ``[...]`` or escaped (``\\|``) does not split.
    """
    parts: list[str] = []
    last = 0
    for i, ch, depth in structure(text):
        if ch == "|" and depth == 0:
            parts.append(text[last:i])
            last = i + 1
    parts.append(text[last:])
    return parts


def compile_glob(glob: str, *, path: bool = False) -> re.Pattern[str]:
    """Compile a whole-string, case-sensitive glob with wcmatch.

    Name and text globs (fnmatch): ``*`` crosses ``/`` and matches a leading
    ``.``; the empty string matches when the glob allows it (``*``, ``{a,}``),
    which wcmatch, made for file names, never does on its own. Path globs:
    ``**`` crosses ``/``, ``*`` does not; dotfiles match. Raises
    ``DefinitionError`` for a glob wcmatch refuses (over 1000 brace expansions).
    """
    try:
        return re.compile("|".join(_translate(glob, path)))
    except Exception as exc:  # wcmatch's PatternLimitException, re.error
        raise DefinitionError(
            f"invalid glob {glob!r}: {exc}", expected="a glob with at most 1000 brace expansions"
        ) from None


#: (glob, path?) -> the regexes wcmatch translated it to. A hook process preloads this from
#: its compiled-definition cache (``_defcache``), so it needs no wcmatch import.
GLOB_TRANSLATIONS: dict[tuple[str, bool], list[str]] = {}


def _translate(glob: str, path: bool) -> list[str]:
    known = GLOB_TRANSLATIONS.get((glob, path))
    if known is None:
        known = GLOB_TRANSLATIONS[(glob, path)] = _wcmatch_translate(glob, path)
    return known


def _wcmatch_translate(glob: str, path: bool) -> list[str]:
    if path:
        from wcmatch import glob as wglob

        flags = wglob.GLOBSTAR | wglob.BRACE | wglob.DOTGLOB | wglob.CASE | wglob.FORCEUNIX
        include: list[str] = wglob.translate(glob, flags=flags)[0]
        return include
    from wcmatch import fnmatch as wfn

    flags = wfn.BRACE | wfn.DOTMATCH | wfn.CASE | wfn.FORCEUNIX
    include = wfn.translate(glob, flags=flags)[0]
    # the glob matches "" iff glob + NUL matches NUL
    if ("*" in glob or "{" in glob) and re.fullmatch(
        "|".join(wfn.translate(glob + "\0", flags=flags)[0]), "\0"
    ):
        include = [*include, "^$"]
    return include


class ArgRule:
    """The ``(glob)`` part of ``Tool(glob)``, compiled for text and for path arguments.

    Everything is compiled here, once. An absolute path glob is one regex; a
    relative one is split into how many directories it climbs above the
    event's ``cwd`` (leading ``..``) and a relative regex for the rest, tested
    against the part of the path below that anchor, so a new ``cwd`` costs no
    compilation. A trailing ``/`` means everything below the directory.
    """

    __slots__ = ("_abs_re", "_rel_re", "_text_re", "_ups", "path_prefix", "source", "text_prefix")

    def __init__(self, source: str) -> None:
        self.source = source
        text_globs = [source]
        if source.endswith(":*"):  # Claude's legacy prefix form: "npm run test:*"
            prefix = source[:-2]
            text_globs = [prefix, prefix + " *"]
        self._text_re = re.compile("|".join(compile_glob(g).pattern for g in text_globs))
        #: what every matching text starts with (``rule_index`` files the rule under it)
        self.text_prefix = literal_prefix(text_globs[0])
        #: the same for the path below the rule's anchor (``/`` for an absolute rule)
        self.path_prefix = ""
        glob = posixpath.expanduser(source) if source.startswith("~") else source
        if glob.endswith("/"):
            glob += "**"
        self._abs_re: re.Pattern[str] | None = None
        self._rel_re: re.Pattern[str] | None = None
        self._ups = 0
        segments = _normalize_glob(glob)
        if glob.startswith("/"):
            self._abs_re = compile_glob("/" + "/".join(segments), path=True)
            self.path_prefix = literal_prefix("/" + "/".join(segments))
            return
        while segments and segments[0] == "..":
            segments.pop(0)
            self._ups += 1
        if segments:
            self._rel_re = compile_glob("/".join(segments), path=True)
            self.path_prefix = literal_prefix("/".join(segments))

    def _matches_path(self, value: str, cwd: str) -> bool:
        return self.matches_absolute(normalize_path(value, cwd), cwd)

    def matches_absolute(self, path: str, cwd: str) -> bool:
        """Does a path already absolute and normalised match (relative globs at ``cwd``)?"""
        if self._abs_re is not None:
            return self._abs_re.fullmatch(path) is not None
        anchor = _directory(cwd, self._ups)
        if self._rel_re is None:  # "Write(.)", "Write(..)": the directory itself
            return path == anchor
        prefix = anchor if anchor == "/" else anchor + "/"
        return path.startswith(prefix) and self._rel_re.fullmatch(path[len(prefix) :]) is not None

    def matches(self, value: Any, kind: str, cwd: str) -> bool:
        if not isinstance(value, str):
            return False
        if kind != "path":
            return self._text_re.fullmatch(value) is not None
        return self._matches_path(value, cwd)


def literal_prefix(glob: str) -> str:
    """The literal start of ``glob``: the text before its first wildcard, class, brace or
    escape. Every string the glob matches starts with it (globs are case-sensitive)."""
    for i, ch in enumerate(glob):
        if ch in _SPECIAL:
            return glob[:i]
    return glob


_SPECIAL: Final = frozenset("*?[{\\")


def _absolute(value: str, base: str) -> str:
    value = value.replace("\\", "/")
    if value.startswith("~"):
        value = posixpath.expanduser(value)
    if not value.startswith("/"):
        value = base + "/" + value
    value = posixpath.normpath(value)
    # normpath keeps a leading "//" (POSIX leaves it implementation-defined)
    return value[1:] if value.startswith("//") else value


@functools.lru_cache(maxsize=256)
def _directory(cwd: str, ups: int = 0) -> str:
    """``cwd`` made absolute and normalised (a relative one hangs off ``/``), ``ups`` levels up."""
    path = _absolute(cwd, "/")
    for _ in range(ups):
        path = posixpath.dirname(path)
    return path


def normalize_path(value: str, cwd: str) -> str:
    """Absolute, ``..``-resolved POSIX path (lexical: no filesystem access)."""
    return _absolute(value, _directory(cwd))


def _normalize_glob(glob: str) -> list[str]:
    """The segments of ``glob`` with ``.``, empty and ``..`` segments resolved.

    Lexical, like ``posixpath.normpath``: ``..`` removes the segment before it
    (wildcard or not). A leading ``..`` of a relative glob is kept (it climbs
    above ``cwd``); one that would climb above ``/`` is dropped, as the
    filesystem does.
    """
    absolute = glob.startswith("/")
    parts: list[str] = []
    for seg in glob.split("/"):
        if seg in ("", "."):
            continue
        if seg != "..":
            parts.append(seg)
        elif parts and parts[-1] != "..":
            parts.pop()
        elif not absolute:
            parts.append(seg)
    return parts


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
    __slots__ = ("arg", "name", "name_re")

    def __init__(self, name: str, name_re: re.Pattern[str] | None, arg: ArgRule | None) -> None:
        self.name = name
        self.name_re = name_re
        self.arg = arg


def _parse_alternative(alt: str, source: str) -> _Alternative:
    """``Name`` or ``Name(glob)``; ``source`` is the whole pattern, for messages."""
    if alt.startswith("!"):
        raise DefinitionError(
            f"'!' inside {source!r}: it negates the whole pattern, so it may only lead it",
            expected="'!A|B' (neither A nor B)",
        )
    parens = [(i, ch) for i, ch, depth in structure(alt) if depth == 0 and ch in "()"]
    if not parens:
        return _Alternative(alt, None if alt == "*" else compile_glob(alt), None)
    # balanced, so depth-0 parens alternate "(" ")"
    (open_at, _), (close_at, _) = parens[0], parens[1]
    if len(parens) > 2 or close_at != len(alt) - 1:
        raise DefinitionError(
            f"misplaced parenthesis in {alt!r}", expected="Tool(glob) or a name glob"
        )
    name, arg = alt[:open_at].strip(), alt[open_at + 1 : close_at]
    if not name:
        raise DefinitionError(f"argument rule {alt!r} has no tool name", expected="Tool(glob)")
    if not arg.strip():
        raise DefinitionError(f"argument rule {alt!r} has an empty glob", expected="Tool(glob)")
    return _Alternative(name, None if name == "*" else compile_glob(name), ArgRule(arg))


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
        for alt in split_alternatives(body):
            alt = alt.strip()
            if not alt:
                raise DefinitionError(
                    f"empty alternative in {source!r}", expected="names between '|'"
                )
            self._alts.append(_parse_alternative(alt, source))

    def __repr__(self) -> str:
        return f"Pattern({self.source!r})"

    @property
    def names(self) -> list[str]:
        """Tool-name globs of the alternatives (for ``check``'s unmatched warning)."""
        return [a.name for a in self._alts]

    def matches_name(self, subject: str) -> bool:
        """Could this pattern match ``subject`` for some input? (used by ``check``)."""
        if self.match_all:
            return True
        if self._regex is not None:
            return self._regex.fullmatch(subject) is not None
        hit = any(a.name_re is None or a.name_re.fullmatch(subject) for a in self._alts)
        return True if self.negate else hit

    def names_matching(self, subject: str, *, ignore_case: bool = False) -> list[str]:
        """The alternatives' tool-name globs that match ``subject``, argument rules aside
        (a ``re:`` pattern answers with its whole source); ``[]`` for a match-all pattern.

        ``ignore_case`` recompiles the names case-insensitively: it finds the ``Bash`` a
        definition meant for a tool called ``bash``. Cold path (warnings), not cached.
        """
        flags = re.IGNORECASE if ignore_case else 0
        if self.match_all:
            return []
        if self._regex is not None:
            regex = re.compile(self._regex.pattern, self._regex.flags | flags)
            return [self.source] if regex.fullmatch(subject) else []
        found: list[str] = []
        for alt in self._alts:
            name_re = alt.name_re
            if name_re is not None and flags:
                name_re = re.compile(name_re.pattern, name_re.flags | flags)
            if (name_re is None or name_re.fullmatch(subject)) and alt.name not in found:
                found.append(alt.name)
        return found

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
