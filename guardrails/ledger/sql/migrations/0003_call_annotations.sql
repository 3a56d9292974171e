-- Facts hooks attach to a call (HookResult.annotations), as JSON: e.g. the side-effect
-- intent bash_side_effects classified, or the idempotency key a call claimed.

ALTER TABLE tool_calls ADD COLUMN annotations TEXT;
