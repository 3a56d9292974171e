-- One row per hook run (PostgreSQL's version of sql/views/hook_runs.sql, which describes
-- the columns).
CREATE VIEW hook_runs AS
SELECT
    s.id * 65536 + r.n - 1 AS id,
    s.session_id,
    s.event,
    s.tool_call_id,
    s.event_id,
    r.v ->> 0 AS hook,
    r.v ->> 1 AS matcher,
    (r.v ->> 2)::integer AS priority,
    r.v ->> 3 AS outcome,
    (r.v ->> 4)::double precision AS duration_ms,
    r.v ->> 5 AS error,
    (r.v ->> 6)::integer AS injected_chars,
    s.created_at,
    s.flags
FROM hook_run_sets AS s
CROSS JOIN LATERAL jsonb_array_elements(s.runs) WITH ORDINALITY AS r (v, n);

-- A row inserted into the view becomes a set of one run (as sql/views/hook_runs.sql).
CREATE OR REPLACE FUNCTION hookrails_hook_runs_insert() RETURNS trigger AS $$
BEGIN
    INSERT INTO hook_run_sets (
        id, session_id, event, tool_call_id, event_id, created_at, runs, flags
    )
    VALUES (
        coalesce(NEW.id, nextval(pg_get_serial_sequence('hook_run_sets', 'id'))),
        NEW.session_id,
        NEW.event,
        NEW.tool_call_id,
        NEW.event_id,
        NEW.created_at,
        jsonb_build_array(jsonb_build_array(
            NEW.hook, NEW.matcher, NEW.priority, NEW.outcome, NEW.duration_ms, NEW.error,
            coalesce(NEW.injected_chars, 0)
        )),
        (CASE WHEN NEW.outcome IN ('deny', 'block', 'ask', 'halt') THEN 1 ELSE 0 END)
            | (CASE WHEN NEW.outcome IN ('error', 'timeout', 'invalid', 'refused') THEN 2 ELSE 0 END)
            | (CASE WHEN NEW.outcome = 'inject' OR coalesce(NEW.injected_chars, 0) > 0
                    THEN 4 ELSE 0 END)
    );
    RETURN NEW;
END
$$ LANGUAGE plpgsql;
CREATE TRIGGER hook_runs_insert INSTEAD OF INSERT ON hook_runs
    FOR EACH ROW EXECUTE FUNCTION hookrails_hook_runs_insert();
