-- Indexes for the views and for hooks that query the ledger at call time:
-- hook runs by event row, events by kind, and successful calls by session and tool
-- (ctx.ledger.succeeded("run_tests", session_id) is one index probe), and recent calls.

CREATE INDEX hook_runs_by_event ON hook_runs (event_id);
CREATE INDEX events_by_kind ON events (event, decision);
CREATE INDEX tool_calls_by_session_tool ON tool_calls (session_id, tool_name, status);
CREATE INDEX tool_calls_by_start ON tool_calls (started_at);
