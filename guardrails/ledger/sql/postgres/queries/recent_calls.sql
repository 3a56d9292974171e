-- The most recent tool calls across all sessions, newest first.
-- params: :limit
--
-- PostgreSQL's version of sql/queries/recent_calls.sql (the columns are described there).
SELECT
    hookrails_iso(started_at) AS started_at,
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
    tool_call_arguments::text AS tool_call_arguments
FROM tool_calls
ORDER BY tool_calls.started_at DESC, id DESC
LIMIT :limit;
