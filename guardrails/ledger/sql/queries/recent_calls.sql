-- The most recent tool calls across all sessions, newest first.
-- params: :limit
--
-- :limit is how many rows to return. Columns: started_at, session_id, agent_name, agent_id,
-- tool_name, tool_call_id, status, decision, reason, duration_ms, error_type, error_message,
-- tool_call_arguments (see tool_calls).
SELECT
    started_at,
    session_id,
    agent_name,
    agent_id,
    tool_name,
    tool_call_id,
    status,
    decision,
    reason,
    duration_ms,
    error_type,
    error_message,
    tool_call_arguments
FROM tool_calls
ORDER BY started_at DESC, id DESC
LIMIT :limit;
