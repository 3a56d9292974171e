"""Shell command intent: what a Bash command line would do, before it runs.

``classify(command)`` parses the line (``parser``), expands and analyses each
simple command (``analyze``: wrappers, code run by shells and interpreters,
data flow) and looks each program up (``programs``). A line that does not
parse, or nests past the parser's limit, is ``unknown`` and opaque (the guards
treat what they cannot see as the worst case). ``BashSideEffects`` records the
result on the call (``annotations["intent"]``).
"""

from __future__ import annotations

import functools
from typing import Any

from ...results import HookResult
from . import opaque as why
from .analyze import Analyzer
from .records import KINDS, Command, Intent
from .syntax import MAX_DEPTH, TooDeep
from .values import Opaque

__all__ = [
    "KINDS",
    "BashSideEffects",
    "Command",
    "Intent",
    "bash_side_effects",
    "classify",
    "command_of",
]


@functools.lru_cache(maxsize=512)
def _classify_cached(command: str) -> Intent:
    an = Analyzer()
    if "mkfifo" in command:  # a named pipe read before it is written: learn what is written
        first = Analyzer()
        try:
            first.script(command, "", 0)
            an.files.update((k, v) for k, v in first.files.items() if k in first.fifos)
        except (TooDeep, RecursionError, OverflowError):
            pass
    error: str | None = None
    opaque: list[Opaque] = []
    try:
        an.script(command, "", 0)
    except TooDeep:
        error = f"nesting deeper than {MAX_DEPTH} levels"
        opaque.append(why.nesting())
    except (RecursionError, OverflowError):
        error = "nesting too deep to analyse"
        opaque.append(why.nesting())
    if an.errors and error is None:
        error = "; ".join(dict.fromkeys(an.errors))
        opaque.append(why.parse_error(error))
    commands = tuple(an.commands)
    kinds = {k for c in commands if not c.speculative for k in c.kinds}
    if error is not None:
        kinds.add("unknown")
    if not kinds:
        kinds = {"read_only"}
    if len(kinds) > 1:
        kinds.discard("read_only")
    return Intent(frozenset(kinds), commands, error, tuple(opaque), tuple(an.holes.table))


def classify(command: str) -> Intent:
    """Parse a shell command line and classify every command it would run.

    Never raises: a line that does not parse is ``unknown`` with ``error`` set
    (and the commands parsed up to the error still listed). Results are cached,
    so hooks that classify the same command share the work.
    """
    if not isinstance(command, str):
        return Intent(frozenset({"unknown"}), (), f"not a command string: {type(command).__name__}")
    try:
        if len(command) > 20_000:
            return _classify_cached.__wrapped__(command)
        return _classify_cached(command)
    except Exception as exc:  # never crash a hook over an odd command line
        error = f"could not analyse the command: {exc!r}"
        return Intent(frozenset({"unknown"}), (), error, (why.parse_error(error),))


# --- hooks ---------------------------------------------------------------------


def command_of(event: Any, ctx: Any) -> str | None:
    """The shell command of a tool call, or ``None``.

    The tool's declared text ``primary_arg`` (``tools: {run: {primary_arg: cmd}}``)
    when it has one, else ``tool_input["command"]`` (Claude's Bash).
    """
    tool_input = getattr(event, "tool_input", None)
    if not isinstance(tool_input, dict):
        return None
    key = "command"
    definition = getattr(ctx, "definition", None)
    tools = getattr(definition, "tools", None) or {}
    spec = tools.get(getattr(event, "tool_name", ""))
    if spec is not None and spec.primary_arg and spec.arg_kind != "path":
        key = spec.primary_arg
    value = tool_input.get(key)
    return value if isinstance(value, str) else None


class BashSideEffects:
    """Record what a shell command would do, for the ledger and for idempotency.

    Returns ``HookResult(annotations={"intent": ...})`` and never a decision:
    the intent (kinds, parsed commands, redirect targets) is stored with the
    call in ``tool_calls.annotations``, so ``select ... where
    json_extract(annotations, '$.intent.side_effecting')`` finds every
    mutating shell call. Bind it to Bash-like tools; a call without a command
    string gets no opinion.
    """

    hook_name = "bash_side_effects"
    #: its PreToolUse judgement holds on PermissionRequest and PreSkillShellCommand too
    judges_calls = True

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        command = command_of(event, ctx)
        if command is None:
            return None
        return HookResult(annotations={"intent": classify(command).as_dict()})


bash_side_effects = BashSideEffects()
