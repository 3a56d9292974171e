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
        s.created_at AS at,
        'hook' AS kind,
        s.session_id,
        s.event,
        r.v ->> 0 AS name,
        r.v ->> 3 AS status,
        s.tool_call_id,
        NULL AS error_type,
        r.v ->> 5 AS error_message,
        s.id * 65536 + r.n - 1 AS id
    FROM hook_run_sets AS s CROSS JOIN LATERAL jsonb_array_elements(s.runs) WITH ORDINALITY AS r (v, n)
    WHERE (s.flags & 2) != 0 AND r.v ->> 3 IN ('error', 'timeout', 'invalid', 'refused')
) AS f
ORDER BY f.at DESC, kind, id DESC;
