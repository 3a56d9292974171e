"""Every Claude Code hook event as data, and what Claude does with a hook's answer to each.

Read out of the Claude Code 2.1.332 CLI (its hook-input and hook-output schemas, the
matcher switch, and the events where ``onFailure: block`` counts) and the
claude-agent-sdk types; docs/design.md §3 explains the shape. Plain literals only:
``hookrails hook`` imports this on every event, and building the event classes of
the events in :data:`BUILT` is left to the first use of each
(:func:`guardrails._event_base.event_class`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "BLOCK_ENDS_CHAIN",
    "BUILT",
    "CONTEXT_EVENTS",
    "DEFER_EVENTS",
    "HAND_WRITTEN",
    "INSTRUCTION_EVENTS",
    "LEGACY_AGENT_SUBJECT",
    "NAMES",
    "NO_MATCHER",
    "ON_FAILURE_EVENTS",
    "OUTPUT_FIELDS",
    "OUTPUT_KEYS",
    "PERMISSION_EVENTS",
    "REFUSALS",
    "SPECIFIC_KEYS",
    "SUBJECTS",
    "SUBJECT_VALUES",
    "TOOL_NAME_EVENTS",
    "TOP_KEYS",
    "TOP_LEVEL_OUTPUT",
    "UNPRIVILEGED_OUTPUT",
]

#: the events whose classes are written out in ``guardrails.events`` (the hot ones)
HAND_WRITTEN: Final = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "SubagentStart",
    "SubagentStop",
    "AgentStop",
    "SessionStart",
    "SessionEnd",
)

#: name -> (matcher subject field, required fields, fields as ``name: annotation``, doc),
#: for the events whose class is built from this row on first use. A field is required
#: only when every CLI that sends the event sends it (the rest are optional: older CLIs
#: lack them, docs/design.md §3); annotations are the ``_event_base`` subset.
BUILT: Final[dict[str, tuple[str | None, tuple[str, ...], tuple[str, ...], str]]] = {
    "PostToolBatch": (
        None,
        ("tool_calls",),
        ("tool_calls: list[Any]",),
        "Every tool call of a batch resolved, before the next model request; a block stops "
        "the agentic loop.",
    ),
    "Notification": (
        "notification_type",
        ("message",),
        ("message: str", "title: str | None", "notification_type: str | None"),
        "Claude shows a notification (permission prompt, idle prompt, ...); hooks observe it.",
    ),
    "UserPromptExpansion": (
        "command_name",
        ("command_name",),
        (
            "expansion_type: str | None",
            "command_name: str",
            "command_args: str | None",
            "command_source: str | None",
            "prompt: str | None",
        ),
        "A slash command the user typed expands into a prompt; hooks may block or add context.",
    ),
    "StopFailure": (
        "error",
        ("error",),
        ("error: str", "error_details: str | None", "last_assistant_message: str | None"),
        "The turn ended on an API error instead of a Stop; Claude ignores the answer.",
    ),
    "PreCompact": (
        "trigger",
        ("trigger",),
        ("trigger: str", "custom_instructions: str | None"),
        "The conversation is about to be compacted; hooks may block it.",
    ),
    "PostCompact": (
        "trigger",
        ("trigger",),
        ("trigger: str", "compact_summary: str | None"),
        "The conversation was compacted; hooks observe the summary.",
    ),
    "PreModelSwitch": (
        "to_model",
        ("to_model",),
        (
            "from_model: str | None",
            "to_model: str",
            "requested_model: str | None",
            "source: str | None",
            "context_tokens: float | None",
            "prompt_cache_warm: bool | None",
            "cache_ttl: str | None",
            "estimated_cache_write_usd: float | None",
            "pricing: str | None",
        ),
        "A model switch was requested; hooks may allow, deny or ask.",
    ),
    "PostModelSwitch": (
        "to_model",
        ("to_model",),
        (
            "from_model: str | None",
            "to_model: str",
            "requested_model: str | None",
            "source: str | None",
            "context_tokens: float | None",
            "prompt_cache_warm: bool | None",
            "cache_ttl: str | None",
            "estimated_cache_write_usd: float | None",
            "pricing: str | None",
        ),
        "The session's model changed; hooks may add context for the new model.",
    ),
    "PermissionRequest": (
        "tool_name",
        ("tool_name", "tool_input"),
        (
            "tool_name: str",
            "tool_input: dict[str, Any]",
            "tool_use_id: str | None",
            "permission_suggestions: list[Any] | None",
            "mcp_server: dict[str, Any] | None",
            "tool_kind: str | None",
            "mcp_skill: dict[str, Any] | None",
        ),
        "Claude is about to ask for permission to run a tool; hooks may allow or deny it.",
    ),
    "PermissionDenied": (
        "tool_name",
        ("tool_name", "tool_input"),
        (
            "tool_name: str",
            "tool_input: dict[str, Any]",
            "tool_use_id: str | None",
            "reason: str | None",
            "mcp_server: dict[str, Any] | None",
        ),
        "Auto mode denied a tool call; hooks may let the model retry it.",
    ),
    "Setup": (
        "trigger",
        ("trigger",),
        ("trigger: str",),
        "Repository setup (init or maintenance); hooks may add context.",
    ),
    "TeammateIdle": (
        None,
        ("teammate_name",),
        ("teammate_name: str", "team_name: str | None"),
        "A teammate is about to go idle; hooks may block to keep it working.",
    ),
    "TaskCreated": (
        None,
        ("task_id",),
        (
            "task_id: str",
            "task_subject: str | None",
            "task_description: str | None",
            "teammate_name: str | None",
            "team_name: str | None",
        ),
        "A task is being created; hooks may block its creation.",
    ),
    "TaskCompleted": (
        None,
        ("task_id",),
        (
            "task_id: str",
            "task_subject: str | None",
            "task_description: str | None",
            "teammate_name: str | None",
            "team_name: str | None",
        ),
        "A task is being marked completed; hooks may block its completion.",
    ),
    "Elicitation": (
        "mcp_server_name",
        ("mcp_server_name",),
        (
            "mcp_server_name: str",
            "message: str | None",
            "mode: str | None",
            "url: str | None",
            "elicitation_id: str | None",
            "requested_schema: dict[str, Any] | None",
        ),
        "An MCP server asks the user for input; hooks may decline it or answer for the user.",
    ),
    "ElicitationResult": (
        "mcp_server_name",
        ("mcp_server_name",),
        (
            "mcp_server_name: str",
            "elicitation_id: str | None",
            "mode: str | None",
            "action: str | None",
            "content: dict[str, Any] | None",
        ),
        "The user answered an MCP elicitation; hooks may block or change the answer.",
    ),
    "ConfigChange": (
        "source",
        ("source",),
        ("source: str", "file_path: str | None"),
        "A settings file or skill changed during the session; hooks may block the change.",
    ),
    "WorktreeCreate": (
        None,
        ("name",),
        ("name: str",),
        "Claude needs a worktree; a hook creates it and answers its path.",
    ),
    "WorktreeRemove": (
        None,
        ("worktree_path",),
        ("worktree_path: str",),
        "A worktree a hook created is being removed.",
    ),
    "InstructionsLoaded": (
        "load_reason",
        ("file_path",),
        (
            "file_path: str",
            "memory_type: str | None",
            "load_reason: str | None",
            "globs: list[Any] | None",
            "trigger_file_path: str | None",
            "parent_file_path: str | None",
        ),
        "An instruction file (CLAUDE.md or a rule) was loaded; hooks observe it.",
    ),
    "CwdChanged": (
        None,
        ("new_cwd",),
        ("old_cwd: str | None", "new_cwd: str"),
        "The working directory changed; hooks may set the files to watch.",
    ),
    "FileChanged": (
        "file_name",
        ("file_path",),
        ("file_path: str", "event: str | None"),
        "A watched file changed; hooks may set the files to watch.",
    ),
    "DirectoryAdded": (
        "source",
        ("directory",),
        ("directory: str", "source: str | None"),
        "A working directory was added mid-session (/add-dir); hooks observe it.",
    ),
    "MessageDisplay": (
        None,
        ("delta",),
        (
            "turn_id: str | None",
            "message_id: str | None",
            "index: float | None",
            "final: bool | None",
            "delta: str",
        ),
        "Assistant text is being displayed; hooks may replace what the screen shows.",
    ),
    "PreSkillShellCommand": (
        "tool_name",
        ("tool_name", "tool_input"),
        (
            "tool_name: str",
            "tool_input: dict[str, Any]",
            "tool_use_id: str | None",
            "command_name: str | None",
            "command_source: str | None",
            "invoked_by: str | None",
        ),
        "A skill's inline shell command is about to run; hooks may allow, deny, ask or defer.",
    ),
}

#: every canonical event name: the hand-written ones, then the others in Claude's order
NAMES: Final = (*HAND_WRITTEN, *BUILT)

#: name -> the wire field its matchers are tested against (``None``: the agent's name,
#: for the events whose matcher Claude ignores). FileChanged's ``file_name`` is the
#: basename of ``file_path``.
SUBJECTS: Final[dict[str, str | None]] = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "PostToolUseFailure": "tool_name",
    "UserPromptSubmit": None,
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
    "AgentStop": None,
    "SessionStart": "source",
    "SessionEnd": "reason",
    **{name: row[0] for name, row in BUILT.items()},
}
#: the values Claude 2.1.332 sends in an event's subject field, where it names them (a
#: newer CLI may add more): ``hookrails check`` warns about a matcher that matches none
SUBJECT_VALUES: Final[dict[str, tuple[str, ...]]] = {
    "SessionStart": ("startup", "resume", "clear", "compact", "fork"),
    "SessionEnd": ("clear", "resume", "logout", "prompt_input_exit", "other"),
    "PreCompact": ("manual", "auto"),
    "PostCompact": ("manual", "auto"),
    "Setup": ("init", "maintenance"),
    "Notification": (
        "permission_prompt",
        "idle_prompt",
        "auth_success",
        "elicitation_dialog",
        "agent_needs_input",
        "agent_completed",
        "elicitation_url_dialog",
        "worker_permission_prompt",
        "push_notification",
        "computer_use_enter",
        "computer_use_exit",
        "quota_auto_resume_fired",
        "quota_auto_resume_stale",
        "quota_auto_resume_disabled",
        "model_refusal_fallback",
        "auth_storage_failure",
        "plugin_notification",
        "elicitation_complete",
        "elicitation_response",
    ),
    "StopFailure": (
        "rate_limit",
        "overloaded",
        "authentication_failed",
        "oauth_org_not_allowed",
        "account_on_hold",
        "verification_required",
        "billing_error",
        "invalid_request",
        "model_not_found",
        "server_error",
        "max_output_tokens",
        "cloud_credential_error",
        "unknown",
    ),
    "ConfigChange": (
        "user_settings",
        "project_settings",
        "local_settings",
        "policy_settings",
        "skills",
    ),
    "InstructionsLoaded": (
        "session_start",
        "nested_traversal",
        "path_glob_match",
        "include",
        "compact",
    ),
    "DirectoryAdded": ("slash_command", "register_repo_root"),
}
#: events whose subject was the agent's name before hookrails matched them as Claude does
#: (on ``source`` and ``reason``): a matcher that names the agent and none of
#: :data:`SUBJECT_VALUES` still matches every event there, with a warning
LEGACY_AGENT_SUBJECT: Final = frozenset({"SessionStart", "SessionEnd"})
#: events whose matcher Claude ignores (every registered hook fires)
NO_MATCHER: Final = frozenset(name for name, subject in SUBJECTS.items() if subject is None)
#: events whose subject is a tool name and that carry ``tool_input``: argument rules apply
TOOL_NAME_EVENTS: Final = frozenset(
    {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PermissionRequest",
        "PermissionDenied",
        "PreSkillShellCommand",
    }
)

#: events decided by allow / deny / ask, merged as PreToolUse is (the first deny wins)
PERMISSION_EVENTS: Final = frozenset(
    {"PreToolUse", "PermissionRequest", "PreSkillShellCommand", "PreModelSwitch"}
)
#: events whose ``permissionDecision`` may be ``defer`` (a headless session pauses)
DEFER_EVENTS: Final = frozenset({"PreToolUse", "PreSkillShellCommand"})

#: event -> what a refusal does in Claude (a deny, ``decision: block``, exit 2); an
#: event not listed cannot be refused: Claude ignores a block there
REFUSALS: Final[dict[str, str]] = {
    "PreToolUse": "the tool call is denied",
    "PermissionRequest": "the permission is denied",
    "PreSkillShellCommand": "the skill's shell command does not run",
    "PreModelSwitch": "the model switch is cancelled",
    "UserPromptSubmit": "the prompt is erased",
    "UserPromptExpansion": "the slash command does not expand",
    "PostToolUse": "the model is told why (the tool already ran)",
    "PostToolUseFailure": "the model is told why (the tool already ran)",
    "PostToolBatch": "the agentic loop stops",
    "AgentStop": "the agent keeps working",
    "SubagentStop": "the subagent keeps working",
    "TeammateIdle": "the teammate keeps working",
    "TaskCreated": "the task is not created",
    "TaskCompleted": "the task is not marked completed",
    "PreCompact": "the compaction does not happen",
    "ConfigChange": "the change is not applied to the session",
    "Elicitation": "the elicitation is declined",
    "ElicitationResult": "the answer is declined",
    "WorktreeCreate": "the worktree is not created",
}
#: events where a refusal ends the chain: later hooks cannot undo it (PreToolUse and the
#: other permission events stop at the first deny in their own branch)
BLOCK_ENDS_CHAIN: Final = frozenset(REFUSALS) - {"PostToolUse", "PostToolUseFailure"}
#: events where Claude honours a handler's ``onFailure: block`` (a hook that could not
#: run counts as exit 2); elsewhere it is ignored
ON_FAILURE_EVENTS: Final = frozenset(
    {
        "PreToolUse",
        "PermissionRequest",
        "PreSkillShellCommand",
        "PreModelSwitch",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "ConfigChange",
        "Elicitation",
        "ElicitationResult",
        "PostToolBatch",
        "TaskCreated",
        "PreCompact",
    }
)
#: events where Claude reads ``additionalContext``
CONTEXT_EVENTS: Final = frozenset(
    {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "SessionStart",
        "Setup",
        "SubagentStart",
        "Notification",
        "AgentStop",
        "SubagentStop",
        "PostModelSwitch",
    }
)

#: events where Claude reads a hook's context as instructions for a request of its own
#: rather than the conversation: PreCompact's successful output joins the compaction's
#: custom instructions, which the summary follows (a command hook's stdout as text, an
#: SDK callback's ``systemMessage``)
INSTRUCTION_EVENTS: Final = frozenset({"PreCompact"})

#: Claude output fields hookrails has no name for, by wire name -> (JSON type, how the
#: values of several hooks merge): ``first`` (the first hook's value stands), ``any``
#: (true when one hook says true), ``every`` (false when one hook says false), ``all``
#: (lists are concatenated), ``join`` (texts joined by a blank line)
OUTPUT_FIELDS: Final[dict[str, tuple[str, str]]] = {
    "sessionTitle": ("a string", "first"),
    "suppressOriginalPrompt": ("a boolean", "any"),
    "initialUserMessage": ("a string", "first"),
    "watchPaths": ("an array of strings", "all"),
    "reloadSkills": ("a boolean", "any"),
    "classifierContext": ("a string", "join"),
    "updatedPermissions": ("an array of objects", "all"),
    "retry": ("a boolean", "every"),
    "action": ("accept, decline or cancel", "first"),
    "content": ("an object", "first"),
    "worktreePath": ("a string", "first"),
    "displayContent": ("a string", "first"),
    "suppressOutput": ("a boolean", "any"),
    "terminalSequence": ("a string", "first"),
}
#: the :data:`OUTPUT_FIELDS` that are top-level in Claude's answer (the rest go in
#: ``hookSpecificOutput``, or in PermissionRequest's ``decision``)
TOP_LEVEL_OUTPUT: Final = frozenset({"suppressOutput", "terminalSequence"})
#: the :data:`OUTPUT_FIELDS` an unprivileged (command, http) hook may give: the rest
#: rewrite what Claude does, shows or tells the model
UNPRIVILEGED_OUTPUT: Final = frozenset({"suppressOutput"})
#: event -> the :data:`OUTPUT_FIELDS` Claude reads on it (the top-level ones on every event)
OUTPUT_KEYS: Final[dict[str, frozenset[str]]] = {
    "PostToolUse": frozenset({"classifierContext"}),
    "UserPromptSubmit": frozenset({"sessionTitle", "suppressOriginalPrompt"}),
    "UserPromptExpansion": frozenset({"suppressOriginalPrompt"}),
    "SessionStart": frozenset({"initialUserMessage", "sessionTitle", "watchPaths", "reloadSkills"}),
    "PermissionRequest": frozenset({"updatedPermissions"}),
    "PermissionDenied": frozenset({"retry"}),
    "Elicitation": frozenset({"action", "content"}),
    "ElicitationResult": frozenset({"action", "content"}),
    "CwdChanged": frozenset({"watchPaths"}),
    "FileChanged": frozenset({"watchPaths"}),
    "WorktreeCreate": frozenset({"worktreePath"}),
    "MessageDisplay": frozenset({"displayContent"}),
}
#: Claude output keys hookrails reads into its own fields (``HookResult.from_claude``) or
#: that only Claude's internals use, top level and in ``hookSpecificOutput``: known, so
#: never a typo
TOP_KEYS: Final = frozenset(
    {
        "continue",
        "continue_",
        "stopReason",
        "decision",
        "reason",
        "systemMessage",
        "hookSpecificOutput",
        "async",
        "async_",
        "asyncTimeout",
    }
)
SPECIFIC_KEYS: Final = frozenset(
    {
        "hookEventName",
        "permissionDecision",
        "permissionDecisionReason",
        "permissionDisplay",
        "updatedInput",
        "additionalContext",
        "updatedToolOutput",
        "updatedMCPToolOutput",
        "decision",
    }
)
