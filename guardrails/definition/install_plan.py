"""Which Claude Code tool calls reach hookrails: the ``matcher`` and ``if`` written per event.

Claude Code starts one hook process per matching handler, so a handler with no
``matcher`` costs every tool call a process (25-34 ms) even when no hookrails
matcher could match it. :func:`plan_event` writes, from the definition's
matchers of one tool event, the narrowest Claude matcher that is still never
narrower than hookrails' own matching: a call hookrails would guard always
reaches it.

Claude's matcher syntax (2.1.332, docs/hosts.md): ``None``, ``""`` and ``"*"``
match every tool; a string of only letters, digits, ``_``, ``-``, spaces,
``,`` and ``|`` is a list of exact names; anything else is an unanchored
JavaScript ``RegExp.test``. Claude also fires a name's aliases and families
(``Task`` on ``Agent``), so what it fires on is a superset of what the string
says, which only ever adds a process.

What is written:

* names and name globs (``*``, ``?``, ``{a,b}``, ``\\`` escapes): exact names
  (``Bash|Write``) when every alternative is a plain name, else one anchored
  regex (``^(?:mcp__github__[\\s\\S]*|Bash)$``);
* an argument rule ``Tool(glob)`` counts as its tool name; a PreToolUse whose
  every matcher is the one rule ``Bash(<words>)``, ``Bash(<words>*)`` or
  ``Bash(<words> *)`` (plain words, nothing the shell or Claude's rule syntax
  reads specially) also gets ``if: "Bash(<glob>)"``. Claude evaluates ``if``
  with its own command parser, which is narrower than hookrails' whole-string
  glob for other shapes (it splits ``curl * | sh`` at the pipe and drops
  ``# comments``; checked with the real CLI), so those keep the name alone;
* every tool (no matcher), with the reason, when a matcher cannot be written
  narrowly: a catch-all, a negation (``!Read``), a ``re:`` pattern, a glob
  with a ``[...]`` class or a ``{1..3}`` range. ``agents=`` and ``tenants=``
  scopes only narrow a matcher further, so leaving them to hookrails is safe.

Also here, because a built-in judges settings by them (``protect_guard_settings``:
the ``definition`` layer is the one both ``builtins`` and ``claude_code`` stand on):
which handlers are hookrails' (:func:`is_ours`) and which events fail closed
(:func:`.undecided.fails_closed`, the policy every Claude host shares).

Light on purpose: ``hookrails hook`` imports it to check that the handler it
runs for was written for the definition as it is now (:func:`coverage_tag`).
"""

from __future__ import annotations

import re

from .undecided import fails_closed, on_failure_counts

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from .model import AgentDefinition, HookMatcher

__all__ = [
    "HOOK_ROUTE",
    "NARROWED_EVENTS",
    "SETTINGS_GUARD",
    "SETTINGS_GUARD_MATCHER",
    "EventPlan",
    "binds_settings_guard",
    "claude_fires",
    "coverage_tag",
    "deciding_plans",
    "glob_to_js",
    "is_ours",
    "plan_event",
    "plan_matchers",
    "watched_files",
]

#: the route of ``hookrails serve`` that answers Claude Code's http hooks
HOOK_ROUTE = "/v1/claude/hook"
#: the events whose Claude matcher is the tool name, which hookrails narrows
NARROWED_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")

# the patterns below are sources, compiled (and cached by re) on first use: a hook process
# imports this module and seldom needs them
#: Claude's exact-name path: a matcher of only these characters is a list of names
_CLAUDE_EXACT = r"[A-Za-z0-9_|, -]+"
#: a name hookrails writes on the exact path (no space or comma: Claude would split there)
_PLAIN_NAME = r"[A-Za-z0-9_-]+"
#: an argument glob whose ``if`` Claude evaluates at least as widely as hookrails: plain
#: words with single spaces, an optional trailing ``*`` (not Claude's legacy ``:*``)
_SAFE_IF = r"[A-Za-z0-9_./=+-]+(?: [A-Za-z0-9_./=+-]+)*(?: ?\*)?"
#: what a JavaScript regex reads specially outside a class
_JS_SPECIAL = frozenset("\\^$.|?*+()[]{}/")
#: one character of a name, astral ones (a surrogate pair in JavaScript) included
_ANY_CHAR = "(?:[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]|[\\s\\S])"


class EventPlan:
    """What ``install`` writes for one event: ``matcher`` (``None``: every tool), the
    handler's ``if`` (``None``: none), and why it is broad (``None``: narrow)."""

    __slots__ = ("broad_because", "condition", "event", "matcher")

    def __init__(
        self,
        event: str,
        matcher: str | None,
        condition: str | None = None,
        broad_because: str | None = None,
    ) -> None:
        self.event = event
        self.matcher = matcher
        self.condition = condition
        self.broad_because = broad_because

    def __repr__(self) -> str:
        return f"EventPlan({self.event!r}, {self.matcher!r}, if={self.condition!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EventPlan) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def key(self) -> tuple[str, str | None, str | None]:
        return (self.event, self.matcher, self.condition)

    def describe(self) -> str:
        """One line for ``hookrails check``: which tool calls reach hookrails."""
        if self.event not in NARROWED_EVENTS:
            return f"{self.event}: every event"
        if self.matcher is None:
            why = f" ({self.broad_because})" if self.broad_because else ""
            return f"{self.event}: every tool call{why}"
        line = f"{self.event}: matcher {self.matcher!r}"
        if self.condition:
            line += f", if {self.condition!r}"
        return line


class _Broad(Exception):
    """A matcher that cannot be written narrowly; the message says why."""


def glob_to_js(glob: str) -> str:
    """A hookrails name glob (whole-string, case-sensitive: ``*``, ``?``, ``{a,b}``,
    ``\\`` escapes) as an unanchored JavaScript regex body matching the same names.
    Raises ``_Broad`` for what it does not translate (``[...]`` classes, ``{1..3}``)."""
    out, end = _translate(glob, 0, top=True)
    if end != len(glob):  # pragma: no cover - _translate consumes all at the top
        raise _Broad(f"cannot translate glob {glob!r}")
    return out


def _translate(glob: str, i: int, *, top: bool) -> tuple[str, int]:
    """From ``i`` to the end (top level) or to the ``,``/``}`` that ends a brace branch."""
    out: list[str] = []
    n = len(glob)
    while i < n:
        ch = glob[i]
        if ch == "\\":
            if i + 1 >= n:
                out.append("\\\\")
                i += 1
                continue
            out.append(_js_literal(glob[i + 1]))
            i += 2
        elif ch == "*":
            out.append("[\\s\\S]*")
            i += 1
        elif ch == "?":
            out.append(_ANY_CHAR)
            i += 1
        elif ch == "[":
            raise _Broad(f"the glob {glob!r} has a [...] class")
        elif ch == "{":
            branches, i = _braces(glob, i)
            out.append("(?:" + "|".join(branches) + ")")
        elif not top and ch in ",}":
            return "".join(out), i
        else:
            out.append(_js_literal(ch))
            i += 1
    if not top:
        raise _Broad(f"the glob {glob!r} has an unclosed brace")
    return "".join(out), i


def _braces(glob: str, i: int) -> tuple[list[str], int]:
    """The branches of the ``{...}`` at ``i`` and the index after its ``}``."""
    close = _brace_end(glob, i)
    if close is None:
        raise _Broad(f"the glob {glob!r} has an unclosed brace")
    if ".." in glob[i + 1 : close]:
        raise _Broad(f"the glob {glob!r} has a {{..}} range")
    branches: list[str] = []
    j = i + 1
    while True:
        branch, j = _translate(glob, j, top=False)
        branches.append(branch)
        if glob[j] == "}":
            break
        j += 1  # past ","
    if len(branches) < 2:  # "{a}" is no brace expansion: its meaning differs by tool
        raise _Broad(f"the glob {glob!r} has a brace with one branch")
    return branches, j + 1


def _brace_end(glob: str, i: int) -> int | None:
    depth = 0
    j = i
    while j < len(glob):
        ch = glob[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return None


def _js_literal(ch: str) -> str:
    return "\\" + ch if ch in _JS_SPECIAL else ch


def _is_literal(glob: str) -> bool:
    return not any(c in glob for c in "*?[{\\")


def plan_matchers(
    event: str,
    sources: Iterable[tuple[str | None, bool]],
    arg_of: Callable[[str], tuple[str, str] | None] | None = None,
) -> EventPlan:
    """The plan for ``event`` from its matchers' ``(matcher string, scoped)`` pairs
    (``scoped``: the matcher has ``agents=``/``tenants=``, which only narrows it).

    ``arg_of`` is the definition's primary-argument lookup: an ``if`` is written
    only where hookrails tests the same argument Claude does (``Bash``'s
    ``command``). The matcher strings must already be valid (they compiled at load).
    """
    from .matchers import split_alternatives

    names: list[str] = []
    rules: set[tuple[str, str | None]] = set()
    try:
        for source, _scoped in sources:
            if source in (None, "", "*"):
                raise _Broad("a matcher matches every tool")
            assert source is not None
            if source.startswith("re:"):
                raise _Broad(f"the matcher {source!r} is a re: pattern")
            if source.startswith("!"):
                raise _Broad(f"the matcher {source!r} is a negation")
            for alt in split_alternatives(source):
                name, arg = _split_rule(alt.strip())
                if name == "*":
                    raise _Broad(f"the matcher {source!r} matches every tool")
                if name not in names:
                    names.append(name)
                rules.add((name, arg))
        if not names:
            raise _Broad("no matcher")
        pieces = [glob_to_js(n) for n in names]
    except _Broad as exc:
        return EventPlan(event, None, None, str(exc))
    condition = _condition(event, rules, arg_of)
    if all(_is_literal(n) and re.fullmatch(_PLAIN_NAME, n) for n in names):
        return EventPlan(event, "|".join(names), condition)
    return EventPlan(event, "^(?:" + "|".join(pieces) + ")$", condition)


def _split_rule(alt: str) -> tuple[str, str | None]:
    """``Tool(glob)`` -> (``Tool``, ``glob``); a bare name -> (name, None)."""
    if alt.endswith(")") and "(" in alt:
        from .matchers import structure

        opens = [i for i, ch, depth in structure(alt) if ch == "(" and depth == 0]
        if opens:
            return alt[: opens[0]].strip(), alt[opens[0] + 1 : -1]
    return alt, None


def _condition(
    event: str,
    rules: set[tuple[str, str | None]],
    arg_of: Callable[[str], tuple[str, str] | None] | None,
) -> str | None:
    if event != "PreToolUse" or len(rules) != 1:
        return None
    ((name, arg),) = rules
    if name != "Bash" or arg is None or not re.fullmatch(_SAFE_IF, arg):
        return None
    if arg_of is not None and arg_of("Bash") != ("command", "text"):
        return None  # the definition tests another argument of Bash
    return f"Bash({arg})"


def plan_event(
    event: str,
    matchers: Iterable[HookMatcher],
    arg_of: Callable[[str], tuple[str, str] | None] | None = None,
) -> EventPlan:
    """:func:`plan_matchers` for a definition's bound matchers of ``event`` (a wire name);
    an event whose subject is not the tool name is written with no matcher."""
    if event not in NARROWED_EVENTS:
        return EventPlan(event, None)
    return plan_matchers(
        event,
        ((m.matcher, m.agents is not None or m.tenants is not None) for m in matchers),
        arg_of,
    )


def coverage_tag(plan: EventPlan) -> str:
    """A short tag of ``plan`` (32-bit FNV-1a of its matcher and ``if``, hex): the handler
    carries the tag of the plan it was written for, and ``hookrails hook`` compares it
    with the definition's plan now, so an edit that needs a new install is caught."""
    tag = 0x811C9DC5
    text = f"{plan.event}\0{plan.matcher or ''}\0{plan.condition or ''}"
    for byte in text.encode("utf-8", "surrogatepass"):
        tag = ((tag ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{tag:08x}"


def claude_fires(matcher: str | None, tool: str) -> bool:
    """Whether Claude Code 2.1.332 fires a handler with ``matcher`` for ``tool`` by the
    name alone (aliases and families aside, which only add): the model the tests prove
    the plan against, and how a record-only handler knows the full one runs."""
    if matcher is None or matcher in ("", "*"):
        return True
    if re.fullmatch(_CLAUDE_EXACT, matcher):
        return tool in [n.strip() for n in re.split(r"[|,]", matcher) if n.strip()]
    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return False  # Claude logs an invalid regex and never fires it


def is_ours(handler: Any) -> bool:
    """A handler hookrails wrote: ``hookrails hook ...`` (shell form, or exec form: the
    script with ``args`` starting ``hook``), ``<python> -m guardrails hook ...``, or an
    http handler pointing at ``hookrails serve``."""
    if not isinstance(handler, dict):
        return False
    kind = handler.get("type")
    if kind == "http":
        url = handler.get("url")
        return isinstance(url, str) and url.rstrip("/").endswith(HOOK_ROUTE)
    command = handler.get("command")
    if kind != "command" or not isinstance(command, str):
        return False
    args = handler.get("args")
    if isinstance(args, list):
        return args[:1] == ["hook"] and _is_script(command)
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) >= 2 and words[1] == "hook":
        return _is_script(words[0])
    return words[1:4] == ["-m", "guardrails", "hook"]


def _is_script(program: str) -> bool:
    name = program.replace("\\", "/").rsplit("/", 1)[-1]
    return name in ("hookrails", "hookrails.exe")


def watched_files(definition: AgentDefinition) -> list[str]:
    """The file names the definition's FileChanged matchers name: Claude watches only the
    files its FileChanged matchers list (``.envrc|.env``), so ``install`` writes them as
    the handler's matcher. A glob or a match-all matcher names none: the files to watch
    then come from a hook's ``watchPaths`` (SessionStart, CwdChanged, FileChanged)."""
    names: list[str] = []
    for m in definition.hooks.get("FileChanged") or ():
        source = m.matcher or ""
        if not source or m.pattern.match_all or m.pattern.negate or re.search(_GLOB, source):
            continue
        for name in source.split("|"):
            if name.strip() and name.strip() not in names:
                names.append(name.strip())
    return names


_GLOB = r"[*?\[\]{}()!]|^re:"


#: the built-in a ConfigChange handler runs by default (``hookrails claude install``)
SETTINGS_GUARD = "protect_guard_settings"
#: the name of the matcher ``hookrails hook --protect-settings`` binds it with (so the
#: guard tells it from a binding the definition makes itself)
SETTINGS_GUARD_MATCHER = "hookrails claude install --protect-settings"


def binds_settings_guard(definition: AgentDefinition, *, own_only: bool = False) -> bool:
    """Whether ``protect_guard_settings`` runs on the definition's ConfigChange; with
    ``own_only``, bound there by the definition itself (not by ``--protect-settings``)."""
    return any(
        h.name == SETTINGS_GUARD
        for m in definition.hooks.get("ConfigChange") or ()
        if not (own_only and m.name == SETTINGS_GUARD_MATCHER)
        for h in m.resolved
    )


def deciding_plans(
    definition: AgentDefinition, *, protect_settings: bool = False
) -> list[tuple[EventPlan, bool]]:
    """What ``hookrails claude install`` writes a deciding handler for, in Claude's event
    order: each event's plan and whether the handler fails closed (``onFailure: block``).

    The events the definition binds; PreSkillShellCommand when PreToolUse's judges judge
    a skill's shell command too (``judged_events``: a skill could otherwise run what
    PreToolUse denies); ConfigChange with ``protect_settings`` (its handler runs
    ``protect_guard_settings``, failing closed). ``protect_guard_settings`` checks the
    settings files against the same list."""
    from ..events import EVENT_NAMES, event_class
    from .hook_refs import judged_events

    extra = set(judged_events(definition)) - {"PermissionRequest"}
    if protect_settings and (extra or any(definition.hooks.values())):
        extra.add("ConfigChange")  # guarding nothing needs no guard on the settings
    # the guard of the settings fails closed, whoever binds it
    guards = "ConfigChange" in extra or binds_settings_guard(definition)
    out: list[tuple[EventPlan, bool]] = []
    for name in EVENT_NAMES:
        matchers = definition.hooks.get(name)
        if not matchers and name not in extra:
            continue
        wire = event_class(name).wire_name
        closed = fails_closed(definition, name) or (name == "ConfigChange" and guards)
        out.append(
            (
                plan_event(wire, matchers or (), definition.arg_of),
                closed and on_failure_counts(name),
            )
        )
    return out
