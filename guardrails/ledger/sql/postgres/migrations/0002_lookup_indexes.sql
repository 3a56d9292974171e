-- Partial indexes, as sql/migrations/0002_lookup_indexes.sql.

CREATE INDEX tool_calls_pending ON tool_calls (started_at) WHERE status = 'pending';
CREATE INDEX hook_runs_by_event ON hook_runs (event_id) WHERE event_id IS NOT NULL;
CREATE INDEX events_by_kind ON events (event, decision);
