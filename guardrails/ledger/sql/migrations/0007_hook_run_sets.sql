-- Hook runs: one row per event's chain of hooks instead of one row per hook (issue #13).
-- A guarded call wrote a row per hook run, each into a table and a random-order index, in
-- both of its transactions: about half of the ledger's SQL time. An event's runs are now one
-- JSON array in one row of hook_run_sets, and hook_runs is a view with one row per run, the
-- same columns as the table it replaces (views/hook_runs.sql). `flags` say what the runs
-- hold, so the indexes below take only the rows lookups need (a chain of no-ops touches no
-- index): 1 a run refused (deny, block, ask, halt), 2 a run failed (error, timeout,
-- invalid, refused), 4 a run injected context. The rows of the old table move here, one set
-- per run, keeping their order.
CREATE TABLE hook_run_sets (
    id            INTEGER PRIMARY KEY,
    session_id    TEXT NOT NULL,
    event         TEXT NOT NULL,
    tool_call_id  TEXT,                      -- joins tool_calls (session_id, tool_call_id)
    event_id      INTEGER REFERENCES events (id),
    created_at    TEXT NOT NULL,
    -- JSON: [[hook, matcher, priority, outcome, duration_ms, error, injected_chars], ...]
    runs          TEXT NOT NULL,
    flags         INTEGER NOT NULL DEFAULT 0
);
INSERT INTO hook_run_sets (id, session_id, event, tool_call_id, event_id, created_at, runs, flags)
SELECT
    id, session_id, event, tool_call_id, event_id, created_at,
    json_array(json_array(hook, matcher, priority, outcome, duration_ms, error, injected_chars)),
    (outcome IN ('deny', 'block', 'ask', 'halt'))
        | ((outcome IN ('error', 'timeout', 'invalid', 'refused')) << 1)
        | ((outcome = 'inject' OR injected_chars > 0) << 2)
FROM hook_runs
ORDER BY id;
DROP TABLE hook_runs;
-- denials, the injection count, one session's refusals: the notable runs of a call or session
CREATE INDEX hook_run_sets_notable ON hook_run_sets (session_id, tool_call_id) WHERE flags != 0;
-- failures, session_timeline: failed hook runs
CREATE INDEX hook_run_sets_failed ON hook_run_sets (created_at) WHERE (flags & 2) != 0;
-- an event's hook runs (the stop-block count a Stop hook seeds)
CREATE INDEX hook_run_sets_by_event ON hook_run_sets (event_id) WHERE event_id IS NOT NULL;
