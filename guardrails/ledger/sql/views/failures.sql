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
-- Ordered by at (newest first), then kind, then the row id (newest first).
CREATE VIEW failures AS
SELECT at, kind, session_id, event, name, status, tool_call_id, error_type, error_message
FROM (
    SELECT
        coalesce(finished_at, started_at) AS at,
        'tool' AS kind,
        session_id,
        NULL AS event,
        tool_name AS name,
        status,
        tool_call_id,
        error_type,
        error_message,
        id
    FROM tool_calls
    WHERE status IN ('error', 'interrupted')
    UNION ALL
    SELECT
        s.created_at AS at,
        'hook' AS kind,
        s.session_id,
        s.event,
        r.value ->> 0 AS name,
        r.value ->> 3 AS status,
        s.tool_call_id,
        NULL AS error_type,
        r.value ->> 5 AS error_message,
        s.id * 65536 + r.key AS id
    FROM hook_run_sets AS s, json_each(s.runs) AS r
    WHERE (s.flags & 2) != 0 AND r.value ->> 3 IN ('error', 'timeout', 'invalid', 'refused')
)
ORDER BY at DESC, kind, id DESC;
