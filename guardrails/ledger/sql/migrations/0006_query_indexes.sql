-- Indexes for the shipped views and saved queries, and one index less on the hot path
-- (docs/design.md §7, issue #13). Each index below is written at most once per call: when
-- the row is inserted, or when the call finishes and enters a partial index.
--
-- tool_calls_pending was written twice per call (the pending row in, then out when the call
-- finished); recover's look for pending calls reads the table instead (off the hot path).
DROP INDEX IF EXISTS tool_calls_pending;
-- recent_calls: the newest calls first
CREATE INDEX tool_calls_by_start ON tool_calls (started_at);
-- denials, denials_by_tool: a call is denied when first recorded and stays denied
CREATE INDEX tool_calls_denied ON tool_calls (started_at) WHERE status = 'denied';
-- failures: failed calls by when they failed (a call enters when it finishes)
CREATE INDEX tool_calls_failed ON tool_calls (coalesce(finished_at, started_at))
    WHERE status IN ('error', 'interrupted');
-- failures, session_timeline: failed hook runs
CREATE INDEX hook_runs_failed ON hook_runs (created_at)
    WHERE outcome IN ('error', 'timeout', 'invalid', 'refused');
-- the stop-block count a Stop hook seeds: one session's events of one kind, newest first
CREATE INDEX events_by_session_event ON events (session_id, event);
-- session_summary: the newest sessions first
CREATE INDEX sessions_by_start ON sessions (started_at DESC, session_id);
