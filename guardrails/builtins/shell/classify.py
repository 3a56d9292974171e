"""Shell command intent: what a Bash command line would do, before it runs.

``classify(command)`` parses the line (``parser``), peels wrappers off each
simple command (``wrappers``), looks the program up (``programs``) and recurses
into the scripts and commands it runs (``bash -c``, ``find -exec`` ...). A line
that does not parse is ``unknown``, which counts as side-effecting.
``BashSideEffects`` records the result on the call (``annotations["intent"]``).
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ...results import HookResult
from .parser import parse
from .programs.effect import Effect
from .programs.table import classify_argv
from .syntax import MAX_DEPTH, ParseState, Redirect, TooDeep
from .wrappers import drop_assignments, unwrap

__all__ = [
    "KINDS",
    "BashSideEffects",
    "Command",
    "Intent",
    "bash_side_effects",
    "classify",
    "command_of",
]

#: every kind, most severe first (``Command.kind`` is the first of its kinds in this order)
KINDS: Final = (
    "delete",
    "move",
    "git_mutation",
    "network_mutation",
    "package_install",
    "process_control",
    "file_write",
    "unknown",
    "read_only",
)
_RANK: Final = {k: i for i, k in enumerate(KINDS)}
_MAX_LISTED: Final = 100  # commands listed in ``Intent.as_dict``


@dataclass(frozen=True, slots=True)
class Command:
    """One simple command the line would run.

    ``argv`` is what runs once env prefixes and wrappers (``sudo``, ``env``,
    ``xargs`` ...) are peeled off; it is empty for a bare redirection
    (``> file``). ``redirects`` are the files output redirections write
    (``/dev/null`` and ``2>&1``-style duplications are not files). ``targets``
    are the paths whose content or existence the command changes, as written
    (redirects, ``tee`` files, ``cp``/``mv``/``ln`` destinations, ``rm`` and
    ``touch`` operands, ``sed -i`` files ...); ``sources`` are the operands a
    ``cp``/``mv``/``ln``/``install`` copies from. ``cwd`` is the directory it
    runs in after the line's own ``cd``: ``""`` for the starting directory, a
    relative or absolute path, or ``None`` when it cannot be known.
    ``pipeline`` numbers the pipeline it belongs to (commands of one pipeline
    are listed in order).
    """

    argv: tuple[str, ...]
    redirects: tuple[str, ...] = ()
    kind: str = "unknown"
    kinds: frozenset[str] = frozenset({"unknown"})
    targets: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    cwd: str | None = ""
    pipeline: int = 0

    @property
    def program(self) -> str:
        """The program's base name (``/bin/rm`` -> ``rm``), or ``""`` for a bare redirection."""
        return posixpath.basename(self.argv[0]) if self.argv else ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"argv": list(self.argv), "kind": self.kind}
        if len(self.kinds) > 1:
            out["kinds"] = sorted(self.kinds, key=_RANK.__getitem__)
        if self.redirects:
            out["redirects"] = list(self.redirects)
        if self.targets:
            out["targets"] = list(self.targets)
        if self.cwd:
            out["cwd"] = self.cwd
        elif self.cwd is None:
            out["cwd"] = None
        return out


@dataclass(frozen=True, slots=True)
class Intent:
    """What a command line would do: the union of its commands' kinds.

    ``kinds`` holds ``read_only`` only when nothing else is in it. ``error``
    says why the line did not parse cleanly (``unknown`` is then in ``kinds``;
    the commands parsed up to the error are still listed).
    """

    kinds: frozenset[str]
    commands: tuple[Command, ...] = ()
    error: str | None = None

    @property
    def side_effecting(self) -> bool:
        """True when any kind other than ``read_only`` is present (``unknown`` included)."""
        return bool(self.kinds - {"read_only"})

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (what ``bash_side_effects`` stores in the ledger)."""
        out: dict[str, Any] = {
            "kinds": sorted(self.kinds, key=_RANK.__getitem__),
            "side_effecting": self.side_effecting,
            "commands": [c.as_dict() for c in self.commands[:_MAX_LISTED]],
        }
        if len(self.commands) > _MAX_LISTED:
            out["commands_omitted"] = len(self.commands) - _MAX_LISTED
        if self.error:
            out["error"] = self.error
        return out


class _Analyzer(ParseState):
    """Turns parsed commands into ``Command`` records, recursing into nested scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.commands: list[Command] = []

    def script(self, text: str, cwd: str | None, depth: int) -> None:
        for raw in parse(text, self, cwd, depth):
            self.argv(drop_assignments(raw.words), raw.redirects, raw.pipeline, raw.cwd, depth)

    def argv(
        self,
        argv: list[str],
        redirects: Sequence[Redirect],
        pid: int,
        cwd: str | None,
        depth: int,
    ) -> None:
        written = [r.target for r in redirects if r.writes]
        stdin = next(
            (r.body for r in reversed(redirects) if r.body is not None and r.fd in (None, "0")),
            None,
        )
        argv, script = unwrap(argv, stdin)
        if script is not None:
            if depth + 1 > MAX_DEPTH:
                raise TooDeep
            self.script(script, cwd, depth + 1)
        if not argv:
            if written:
                self.commands.append(
                    Command(
                        (),
                        tuple(written),
                        "file_write",
                        frozenset({"file_write"}),
                        tuple(written),
                        (),
                        cwd,
                        pid,
                    )
                )
            return
        # a call to a function the line defines: its body is already listed
        res = Effect("read_only") if argv[0] in self.functions else classify_argv(argv)
        for nested in res.nested:
            if nested:
                self.argv(nested, (), self.new_pipeline(), cwd, depth + 1)
        kinds = res.kinds or {"unknown"}
        if written:
            kinds.add("file_write")
        if len(kinds) > 1:
            kinds.discard("read_only")
        self.commands.append(
            Command(
                tuple(argv),
                tuple(written),
                min(kinds, key=_RANK.__getitem__),
                frozenset(kinds),
                tuple(dict.fromkeys([*written, *res.targets])),
                tuple(res.sources),
                cwd,
                pid,
            )
        )


@functools.lru_cache(maxsize=512)
def _classify_cached(command: str) -> Intent:
    an = _Analyzer()
    error: str | None = None
    try:
        an.script(command, "", 0)
    except TooDeep:
        error = f"nesting deeper than {MAX_DEPTH} levels"
    except RecursionError:
        error = "nesting too deep to analyse"
    if an.errors and error is None:
        error = "; ".join(dict.fromkeys(an.errors))
    commands = tuple(an.commands)
    kinds = {k for c in commands for k in c.kinds}
    if error is not None:
        kinds.add("unknown")
    if not kinds:
        kinds = {"read_only"}
    if len(kinds) > 1:
        kinds.discard("read_only")
    return Intent(frozenset(kinds), commands, error)


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
        return Intent(frozenset({"unknown"}), (), f"could not analyse the command: {exc!r}")


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

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        command = command_of(event, ctx)
        if command is None:
            return None
        return HookResult(annotations={"intent": classify(command).as_dict()})


bash_side_effects = BashSideEffects()
