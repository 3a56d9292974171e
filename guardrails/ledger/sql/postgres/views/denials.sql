-- One row per denied tool call, with the hook that denied it; newest first.
--
-- PostgreSQL's version of sql/views/denials.sql (the columns are described there); times
-- are the ledger's ISO text, JSON as it was written.
CREATE VIEW denials AS
SELECT
    hookrails_iso(t.started_at) AS started_at,
    t.session_id,
    t.agent_name,
    t.agent_id,
    t.tool_name,
    t.tool_call_id,
    t.tool_call_arguments::text AS tool_call_arguments,
    t.reason,
    h.run ->> 0 AS hook,
    h.run ->> 1 AS matcher,
    h.run ->> 3 AS hook_outcome
FROM tool_calls AS t
LEFT JOIN LATERAL (
    SELECT r.v AS run
    FROM hook_run_sets AS s CROSS JOIN LATERAL jsonb_array_elements(s.runs) WITH ORDINALITY AS r (v, n)
    WHERE s.session_id = t.session_id
      AND s.tool_call_id = t.tool_call_id
      AND s.flags != 0
      AND r.v ->> 3 IN ('deny', 'error', 'timeout', 'invalid', 'refused')
    ORDER BY s.id, r.n
    LIMIT 1
) AS h ON true
WHERE t.status = 'denied'
ORDER BY t.started_at DESC, t.id DESC;
