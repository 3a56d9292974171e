-- Everything that failed: tool calls that errored or were interrupted, and hook runs that failed; newest first.
--
-- PostgreSQL's version of sql/views/failures.sql (the columns are described there).
CREATE VIEW failures AS
SELECT hookrails_iso(at) AS at, kind, session_id, event, name, status, tool_call_id,
       error_type, error_message
FROM (
    SELECT
        coalesce(finished_at, started_at) AS at,
        'tool' AS kind,
        session_id,
        NULL::text AS event,
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
        created_at AS at,
        'hook' AS kind,
        session_id,
        event,
        hook AS name,
        outcome AS status,
        tool_call_id,
        NULL AS error_type,
        error AS error_message,
        id
    FROM hook_runs
    WHERE outcome IN ('error', 'timeout', 'invalid', 'refused')
) AS f
ORDER BY f.at DESC, kind, id DESC;
