-- One row per hook run: which hook ran for which event, what it decided, how long it took.
--
-- Columns:
--   id              orders the runs as they were recorded: the set's id * 65536 + the run's
--                   position in its event's chain
--   session_id      gen_ai.conversation.id
--   event           the hook event (PreToolUse, PostToolUse, Stop, ...)
--   tool_call_id    gen_ai.tool.call.id of the call the hook ran for; NULL outside a call
--   event_id        the events row of a non-tool event; NULL for a tool call's runs
--   hook            the hook's name
--   matcher         the matcher that selected it
--   priority        its priority in the chain
--   outcome         allow, deny, ask, block, halt, modify, inject, noop, skipped, error,
--                   timeout, invalid or refused
--   duration_ms     how long it ran
--   error           why it failed (outcome error, timeout, invalid, refused)
--   injected_chars  characters it injected into the context
--   created_at      when the event was recorded (UTC ISO-8601 text)
--   flags           of the event's whole chain: 1 a run refused (deny, block, ask, halt), 2 a
--                   run failed, 4 a run injected; 0 for a chain of no-ops and allows. Add
--                   `flags != 0` to a lookup of refusals, failures or injections by
--                   session_id (and tool_call_id): it then reads an index of those runs only
--
-- The runs are stored one row per event in hook_run_sets (runs: a JSON array of
-- [hook, matcher, priority, outcome, duration_ms, error, injected_chars]): a call writes one
-- row, not one per hook.
CREATE VIEW hook_runs AS
SELECT
    s.id * 65536 + r.key AS id,
    s.session_id,
    s.event,
    s.tool_call_id,
    s.event_id,
    r.value ->> 0 AS hook,
    r.value ->> 1 AS matcher,
    r.value ->> 2 AS priority,
    r.value ->> 3 AS outcome,
    r.value ->> 4 AS duration_ms,
    r.value ->> 5 AS error,
    r.value ->> 6 AS injected_chars,
    s.created_at,
    s.flags
FROM hook_run_sets AS s, json_each(s.runs) AS r;

-- A row inserted into the view (a script written for the table this view replaced) becomes a
-- set of one run; an id given is the set's (the run's id is then id * 65536).
CREATE TRIGGER hook_runs_insert INSTEAD OF INSERT ON hook_runs
BEGIN
    INSERT INTO hook_run_sets (
        id, session_id, event, tool_call_id, event_id, created_at, runs, flags
    )
    VALUES (
        NEW.id,
        NEW.session_id,
        NEW.event,
        NEW.tool_call_id,
        NEW.event_id,
        NEW.created_at,
        json_array(json_array(
            NEW.hook, NEW.matcher, NEW.priority, NEW.outcome, NEW.duration_ms, NEW.error,
            coalesce(NEW.injected_chars, 0)
        )),
        (NEW.outcome IN ('deny', 'block', 'ask', 'halt'))
            | ((NEW.outcome IN ('error', 'timeout', 'invalid', 'refused')) << 1)
            | ((NEW.outcome = 'inject' OR coalesce(NEW.injected_chars, 0) > 0) << 2)
    );
END;
