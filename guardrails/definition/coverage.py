"""Tools a definition's tool matchers never match: a typo or a case slip found at setup.

A host adapter that is handed the agent's tools (``guard_tools``, the LangChain
middleware) asks :func:`warn_unmatched_tools`, and ``hookrails check`` asks
:func:`unmatched_tools` about the tools a definition declares: a tool that no
PreToolUse, PostToolUse or PostToolUseFailure matcher can match runs without
any of those hooks, which is rarely what the definition meant. The compiled
patterns decide (``Pattern.specialize``, as the Guard does), never a string
comparison. Not reported: a definition with no tool-event matcher at all (it
guards prompts or stops, not tools), and a tool a negated matcher names
(``!deploy`` leaves it out on purpose).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import UnmatchedToolWarning
from ..events import TOOL_EVENTS
from .model import AgentDefinition, HookMatcher

__all__ = ["UnmatchedTool", "unmatched_tools", "warn_unmatched_tools"]


class UnmatchedTool:
    """One tool no tool-event matcher of ``definition`` can match.

    ``case_names``: the names the definition uses for it but for case (``Bash`` for
    ``bash``); ``arg_only``: the definition names it only in argument rules
    (``deploy(prod*)``) and the tool has no primary argument for them to test.
    """

    __slots__ = ("arg_only", "case_names", "definition", "tool")

    def __init__(
        self,
        tool: str,
        definition: AgentDefinition,
        *,
        case_names: tuple[str, ...] = (),
        arg_only: bool = False,
    ) -> None:
        self.tool = tool
        self.definition = definition
        self.case_names = case_names
        self.arg_only = arg_only

    def __repr__(self) -> str:
        return f"UnmatchedTool({self.tool!r})"

    @property
    def line(self) -> int | None:
        """The line of the definition's file that declares the tool (``tools:``), if any."""
        return self.definition.locations.get(("tools", self.tool))

    @property
    def message(self) -> str:
        d = self.definition
        label = f"definition {d.name!r}" + (f" ({d.source})" if d.source else "")
        text = f"tool {self.tool!r} matches no matcher of {label}"
        if self.case_names:
            names = " or ".join(repr(n) for n in self.case_names)
            return f"{text}; the definition names {names} (tool names are case-sensitive)"
        if self.arg_only:
            return (
                f"{text}; it is named only in argument rules (Tool(glob)), and the tool has "
                f"no primary argument for them to test (set tools.{self.tool}.primary_arg)"
            )
        return f"{text}; no PreToolUse, PostToolUse or PostToolUseFailure hook runs for it"


def unmatched_tools(definition: AgentDefinition, tools: Iterable[str]) -> list[UnmatchedTool]:
    """The tools in ``tools`` (each once, in order) no tool-event matcher can match."""
    matchers: list[HookMatcher] = [
        m for event, ms in definition.hooks.items() if event in TOOL_EVENTS for m in ms
    ]
    if not matchers:
        return []
    found: list[UnmatchedTool] = []
    seen: set[str] = set()
    for tool in tools:
        if tool in seen:
            continue
        seen.add(tool)
        if any(m.pattern.specialize(tool, definition.arg_of) is not False for m in matchers):
            continue
        named = [m.pattern for m in matchers if m.pattern.names_matching(tool)]
        if any(p.negate for p in named):
            continue
        if named:
            found.append(UnmatchedTool(tool, definition, arg_only=True))
            continue
        case_names: list[str] = []
        for m in matchers:
            if not m.pattern.negate:
                for name in m.pattern.names_matching(tool, ignore_case=True):
                    if name not in case_names:
                        case_names.append(name)
        found.append(UnmatchedTool(tool, definition, case_names=tuple(case_names)))
    return found


def warn_unmatched_tools(
    definition: AgentDefinition, tools: Iterable[str], *, stacklevel: int = 2
) -> None:
    """:class:`~guardrails.UnmatchedToolWarning` once for each of :func:`unmatched_tools`;
    ``stacklevel`` as for :func:`warnings.warn`, counted from the caller."""
    import warnings

    for finding in unmatched_tools(definition, tools):
        warnings.warn(finding.message, UnmatchedToolWarning, stacklevel=stacklevel + 1)
