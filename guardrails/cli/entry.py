"""The ``hookrails`` console script.

``hookrails hook`` skips click (and the rest of the CLI): Claude Code starts
one process per hook event, so its start-up cost is paid on every tool call.
Its ``--help`` goes through click like every other command.
"""

from __future__ import annotations

import sys


def main() -> None:
    args = sys.argv[1:]
    if not args:  # exit 2: a Claude Code too old for exec form runs the bare script, and a
        # PreToolUse hook exiting 2 refuses the call (click's own exit code could change)
        sys.stderr.write("usage: hookrails COMMAND [ARGS]... (hookrails --help)\n")
        raise SystemExit(2)
    if args[:1] == ["hook"] and "--help" not in args and "-h" not in args:
        from ..claude_code.hook_command import finish
        from ..claude_code.hook_command import main as hook_main

        finish(hook_main(args[1:]))
    from .main import main as cli_main

    cli_main()
