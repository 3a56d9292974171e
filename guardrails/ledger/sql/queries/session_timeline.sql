-- Every tool call, event and hook failure of one session, in time order.
-- params: :session
--
-- :session is the session_id. Columns:
--   at            tool_call: started_at; event: created_at; hook_failure: created_at
--   kind          'tool_call', 'event' or 'hook_failure'
--   name          the tool_name, the event (UserPromptSubmit, AgentStop, ...) or the hook
--   event         the hook event of a hook_failure (and the event itself for an event row)
--   status        tool_calls.status, events.decision or hook_runs.outcome
--   agent_id      gen_ai.agent.id: the subagent, NULL on the main thread (NULL for hooks)
--   tool_call_id  gen_ai.tool.call.id of the call (or of the call a hook ran for)
--   duration_ms   of the tool call or the hook run
--   reason        the call's or event's reason
--   error         the call's error ("error_type: error_message") or the hook's error
--   arguments     tool_call_arguments of a tool call
-- Rows at the same instant: events, then tool calls, then hook failures, each by id.
SELECT at, kind, name, event, status, agent_id, tool_call_id, duration_ms, reason, error, arguments
FROM (
    SELECT
        started_at AS at,
        'tool_call' AS kind,
        1 AS kind_order,
        id,
        tool_name AS name,
        NULL AS event,
        status,
        agent_id,
        tool_call_id,
        duration_ms,
        reason,
        coalesce(error_type || ': ' || error_message, error_message, error_type) AS error,
        tool_call_arguments AS arguments
    FROM tool_calls
    WHERE session_id = :session
    UNION ALL
    SELECT
        created_at, 'event', 0, id, event, event, decision, agent_id, NULL, NULL, reason, NULL, NULL
    FROM events
    WHERE session_id = :session
    UNION ALL
    SELECT
        s.created_at, 'hook_failure', 2, s.id * 65536 + r.key, r.value ->> 0, s.event,
        r.value ->> 3, NULL, s.tool_call_id, r.value ->> 4, NULL, r.value ->> 5, NULL
    FROM hook_run_sets AS s, json_each(s.runs) AS r
    WHERE s.session_id = :session AND s.flags != 0 AND (s.flags & 2) != 0
      AND r.value ->> 3 IN ('error', 'timeout', 'invalid', 'refused')
)
ORDER BY at, kind_order, id;
