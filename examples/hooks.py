"""Hooks referenced from examples/agent.yaml as `hooks:<name>` (the file's folder is importable)."""

from guardrails import HookResult


def no_force_push(event, ctx):
    return HookResult.deny(
        "force-push is not allowed",
        hint="Push to a new branch and open a pull request instead.",
    )


def dry_run_deploys(event, ctx):
    """Rewrite every deploy into a dry run; the tool runs with the new input."""
    return HookResult.modify(input={**event.tool_input, "dry_run": True})


def remember_style(event, ctx):
    return HookResult.inject("House style: answer in short paragraphs; cite file paths.")
