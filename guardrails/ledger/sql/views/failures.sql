-- Everything that failed: tool calls that errored or were interrupted, and hook runs that failed; newest first.
--
-- Columns:
--   at             when it failed: the call's finished_at (started_at if it never finished),
--                  or the hook run's created_at (UTC ISO-8601 text)
--   kind           'tool' for a tool call, 'hook' for a hook run
--   session_id     gen_ai.conversation.id
--   event          the hook event (PreToolUse, Stop, ...) for 'hook' rows; NULL for 'tool' rows
--   name           the tool_name ('tool') or the hook ('hook')
--   status         tool_calls.status ('error', 'interrupted') or hook_runs.outcome
--                  ('error', 'timeout', 'invalid', 'refused')
--   tool_call_id   gen_ai.tool.call.id; NULL for hook runs outside a tool call
--   error_type     error.type of a failed call; NULL for 'hook' rows
--   error_message  the call's error_message, or the hook run's error
--
-- Ordered by at (newest first), then kind; rows of one instant and kind come newest first
-- (each side is read from its index backwards, and the two are merged as they come, so
-- the first page costs its own rows, not a sort of every failure).
CREATE VIEW failures AS
SELECT
    coalesce(finished_at, started_at) AS at,
    'tool' AS kind,
    session_id,
    NULL AS event,
    tool_name AS name,
    status,
    tool_call_id,
    error_type,
    error_message
FROM tool_calls
WHERE status IN ('error', 'interrupted')
UNION ALL
SELECT
    s.created_at,
    'hook',
    s.session_id,
    s.event,
    r.value ->> 0,
    r.value ->> 3,
    s.tool_call_id,
    NULL,
    r.value ->> 5
FROM hook_run_sets AS s, json_each(s.runs) AS r
WHERE (s.flags & 2) != 0 AND r.value ->> 3 IN ('error', 'timeout', 'invalid', 'refused')
ORDER BY 1 DESC, 2;
