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
