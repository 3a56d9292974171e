"""One exception base with structured subclasses, and the warnings hookrails gives.

Library code raises these; only the CLI (``guardrails.cli``) turns them into
one-line messages. Errors about a file the user wrote or pointed at (a
definition, Claude's settings, a transcript) share :class:`LocatedError`, so
every such message reads ``file:line: what was wrong``.
"""

from __future__ import annotations

__all__ = [
    "DefinitionError",
    "EventError",
    "GuardrailsError",
    "HookFailure",
    "LedgerError",
    "LocatedError",
    "OutputError",
    "RunBlocked",
    "ServeError",
    "SettingsError",
    "ToolDenied",
    "TranscriptError",
    "UnmatchedToolWarning",
    "describe",
    "format_loc",
    "one_line",
]


def one_line(text: object) -> str:
    """Foreign text (an exception's message) folded onto one line, for one-line errors."""
    return " ".join(str(text).split())


def describe(exc: BaseException) -> str:
    """``Type: message`` on one line (just ``Type`` when it has no message)."""
    text = one_line(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class GuardrailsError(Exception):
    """Base of every error hookrails raises on purpose."""


class LocatedError(GuardrailsError):
    """Something is wrong in a file: ``file`` and ``line`` (1-based, when one line is to
    blame) say where, ``message`` says what."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.file = file
        self.line = line
        super().__init__(self.format())

    @property
    def where(self) -> str:
        """``file:line``, ``file``, or empty when no file is known."""
        if not self.file:
            return ""
        return f"{self.file}:{self.line}" if self.line else self.file

    def format(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class DefinitionError(LocatedError):
    """A definition (Python, YAML, TOML or JSON) is invalid.

    ``file``, ``loc`` (rendered as ``path``, e.g. ``hooks.PreToolUse[1].matcher``)
    and ``line`` say where; ``expected`` says what would have been accepted.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        loc: tuple[str | int, ...] = (),
        line: int | None = None,
        expected: str | None = None,
    ) -> None:
        self.loc = tuple(loc)
        self.expected = expected
        super().__init__(message, file=file, line=line)

    @property
    def path(self) -> str:
        return format_loc(self.loc)

    def format(self) -> str:
        where = self.where
        if self.loc:
            where = f"{where}: {self.path}" if where else self.path
        text = f"{where}: {self.message}" if where else self.message
        if self.expected:
            text += f"; expected {self.expected}"
        return text

    def within(
        self,
        *prefix: str | int,
        file: str | None = None,
        lines: dict[tuple[str | int, ...], int] | None = None,
    ) -> DefinitionError:
        """The same error, located inside ``prefix`` (and ``file``, with its line)."""
        loc = (*prefix, *self.loc)
        line = self.line
        if lines and line is None:
            for n in range(len(loc), -1, -1):
                if loc[:n] in lines:
                    line = lines[loc[:n]]
                    break
        return DefinitionError(
            self.message, file=file or self.file, loc=loc, line=line, expected=self.expected
        )


def format_loc(loc: tuple[str | int, ...]) -> str:
    """``("hooks", "PreToolUse", 1, "matcher")`` -> ``hooks.PreToolUse[1].matcher``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class EventError(GuardrailsError):
    """An event payload is malformed or names an unknown event."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)


class HookFailure(GuardrailsError):
    """A hook raised, timed out, returned something invalid, or was refused."""

    def __init__(self, kind: str, message: str, *, hook: str = "") -> None:
        self.kind = kind
        self.hook = hook
        super().__init__(message)


class ToolDenied(GuardrailsError):
    """Raised by the sync ``@guard.tool`` wrapper when a call is denied.

    ``decision`` is the merged :class:`~guardrails.Decision`; the tool never ran.
    """

    def __init__(self, tool_name: str, reason: str, decision: object = None) -> None:
        self.tool_name = tool_name
        self.reason = reason
        self.decision = decision
        super().__init__(f"{tool_name}: denied: {reason}")


class RunBlocked(GuardrailsError):
    """A hook blocked the prompt or halted the agent, in a host that can only stop a run by
    raising (openai-agents).

    ``event_name`` is the event that stopped it, ``reason`` the hook's reason and
    ``decision`` the merged :class:`~guardrails.Decision`.
    """

    def __init__(self, event_name: str, reason: str, decision: object = None) -> None:
        self.event_name = event_name
        self.reason = reason
        self.decision = decision
        super().__init__(f"{event_name}: {reason}")


class LedgerError(GuardrailsError):
    """The ledger cannot be opened or queried as asked.

    ``path`` is the database file; ``kind`` is one of ``newer_schema``,
    ``missing``, ``corrupt``, ``read_only``, ``full``, ``locked``, ``query``.
    """

    def __init__(self, message: str, *, path: str | None = None, kind: str = "error") -> None:
        self.path = path
        self.kind = kind
        super().__init__(f"{path}: {message}" if path else message)


class SettingsError(LocatedError):
    """A Claude Code ``settings.json`` cannot be read or changed safely; it was left as it is."""


class OutputError(GuardrailsError, ValueError):
    """An answer for Claude cannot be written as strict JSON (NaN, infinity, a value JSON
    has no type for): the event is then undecided, never allowed by accident."""


class ServeError(GuardrailsError):
    """``hookrails serve`` refuses to start as asked (an empty token, an exposed address
    without a token)."""


class TranscriptError(LocatedError):
    """A transcript cannot be replayed: missing, unreadable, or not a Claude Code transcript."""


class UnmatchedToolWarning(UserWarning):
    """A host adapter was handed a tool that no PreToolUse, PostToolUse or
    PostToolUseFailure matcher of the definition can match (a typo, a case slip:
    ``bash`` for ``Bash``), so none of those hooks run for it. A warning, not an
    error: the tool still works and the ledger still records its calls.
    """
