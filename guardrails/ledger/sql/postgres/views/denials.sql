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
    h.hook,
    h.matcher,
    h.outcome AS hook_outcome
FROM tool_calls AS t
LEFT JOIN hook_runs AS h ON h.id = (
    SELECT r.id
    FROM hook_runs AS r
    WHERE r.session_id = t.session_id
      AND r.tool_call_id = t.tool_call_id
      AND r.outcome IN ('deny', 'error', 'timeout', 'invalid', 'refused')
    ORDER BY r.id
    LIMIT 1
)
WHERE t.status = 'denied'
ORDER BY t.started_at DESC, t.id DESC;
