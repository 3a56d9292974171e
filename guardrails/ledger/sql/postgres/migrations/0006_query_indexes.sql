-- Indexes for the shipped views and saved queries, as sql/migrations/0006_query_indexes.sql.
DROP INDEX IF EXISTS tool_calls_pending;
CREATE INDEX tool_calls_by_start ON tool_calls (started_at);
CREATE INDEX tool_calls_denied ON tool_calls (started_at) WHERE status = 'denied';
CREATE INDEX tool_calls_failed ON tool_calls ((coalesce(finished_at, started_at)))
    WHERE status IN ('error', 'interrupted');
CREATE INDEX hook_runs_failed ON hook_runs (created_at)
    WHERE outcome IN ('error', 'timeout', 'invalid', 'refused');
CREATE INDEX events_by_session_event ON events (session_id, event);
CREATE INDEX sessions_by_start ON sessions (started_at DESC, session_id);
