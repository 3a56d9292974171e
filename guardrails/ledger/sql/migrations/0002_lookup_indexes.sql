-- Partial indexes: they cost a write only for the rows they cover.
-- Pending calls (what `recover` scans; a call leaves the index when it finishes),
-- hook runs of prompt/stop/session events (the views join them to events), and
-- events by kind for the timeline and summary views.

CREATE INDEX tool_calls_pending ON tool_calls (started_at) WHERE status = 'pending';
CREATE INDEX hook_runs_by_event ON hook_runs (event_id) WHERE event_id IS NOT NULL;
CREATE INDEX events_by_kind ON events (event, decision);
