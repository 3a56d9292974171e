-- One row per denied tool call, with the hook that denied it; newest first.
--
-- Columns:
--   started_at           when the call was attempted (UTC ISO-8601 text)
--   session_id           gen_ai.conversation.id
--   agent_name           gen_ai.agent.name
--   agent_id             gen_ai.agent.id: the subagent, NULL on the main thread
--   tool_name            gen_ai.tool.name
--   tool_call_id         gen_ai.tool.call.id (joins hook_runs on session_id + tool_call_id)
--   tool_call_arguments  the arguments as the model sent them (JSON text)
--   reason               the denial reason recorded on the call
--   hook                 the hook that denied it: the first hook run for this call (lowest
--                        hook_runs.id) whose outcome is 'deny' or a failure ('error',
--                        'timeout', 'invalid', 'refused': a failing hook denies when it fails
--                        closed); NULL when no hook run qualifies (e.g. the user rejected an
--                        'ask', or the call was denied by policy without a hook)
--   matcher              that hook run's matcher
--   hook_outcome         that hook run's outcome: deny, error, timeout, invalid or refused
--
-- Ordered by started_at (newest first), then tool_calls.id (newest first).
CREATE VIEW denials AS
SELECT
    t.started_at,
    t.session_id,
    t.agent_name,
    t.agent_id,
    t.tool_name,
    t.tool_call_id,
    t.tool_call_arguments,
    t.reason,
    t.run ->> 0 AS hook,
    t.run ->> 1 AS matcher,
    t.run ->> 3 AS hook_outcome
FROM (
    SELECT
        c.*,
        (
            SELECT r.value
            FROM hook_run_sets AS s, json_each(s.runs) AS r
            WHERE s.session_id = c.session_id
              AND s.tool_call_id = c.tool_call_id
              AND s.flags != 0
              AND r.value ->> 3 IN ('deny', 'error', 'timeout', 'invalid', 'refused')
            ORDER BY s.id, r.key
            LIMIT 1
        ) AS run
    FROM tool_calls AS c
    WHERE c.status = 'denied'
) AS t
ORDER BY t.started_at DESC, t.id DESC;
