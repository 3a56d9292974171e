-- Every tool call, event and hook failure of one session, in time order.
-- params: :session
--
-- PostgreSQL's version of sql/queries/session_timeline.sql (the columns are described
-- there); times are the ledger's ISO text, JSON as it was written.
SELECT hookrails_iso(at) AS at, kind, name, event, status, agent_id, tool_call_id, duration_ms,
       reason, error, arguments
FROM (
    SELECT
        started_at AS at,
        'tool_call' AS kind,
        1 AS kind_order,
        id,
        tool_name AS name,
        NULL::text AS event,
        status,
        agent_id,
        tool_call_id,
        duration_ms,
        reason,
        coalesce(error_type || ': ' || error_message, error_message, error_type) AS error,
        tool_call_arguments::text AS arguments
    FROM tool_calls
    WHERE session_id = :session
    UNION ALL
    SELECT
        created_at, 'event', 0, id, event, event, decision, agent_id, NULL, NULL, reason, NULL, NULL
    FROM events
    WHERE session_id = :session
    UNION ALL
    SELECT
        s.created_at, 'hook_failure', 2, s.id * 65536 + r.n - 1, r.v ->> 0, s.event, r.v ->> 3,
        NULL, s.tool_call_id, (r.v ->> 4)::double precision, NULL, r.v ->> 5, NULL
    FROM hook_run_sets AS s CROSS JOIN LATERAL jsonb_array_elements(s.runs) WITH ORDINALITY AS r (v, n)
    WHERE s.session_id = :session AND s.flags != 0 AND (s.flags & 2) != 0
      AND r.v ->> 3 IN ('error', 'timeout', 'invalid', 'refused')
) AS timeline
ORDER BY timeline.at, kind_order, id;
