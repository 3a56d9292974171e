-- One row per hook and event: how often it ran, how long it took and how often it failed; slowest first.
--
-- PostgreSQL's version of sql/views/slow_hooks.sql (the columns are described
-- there). No rollups here (sql/postgres/migrations/0008_rollups.sql): the same answers from
-- the tables.
CREATE VIEW slow_hooks AS
WITH timed AS (
    SELECT
        hook,
        event,
        duration_ms,
        -- 3 significant digits, as SQLite's printf('%.2e'): the value the percentiles rank
        to_char(duration_ms, '9.99EEEE')::double precision AS rounded_ms,
        row_number() OVER (PARTITION BY hook, event ORDER BY duration_ms, id) AS nth,
        count(*) OVER (PARTITION BY hook, event) AS n
    FROM hook_runs
    WHERE duration_ms IS NOT NULL
),
percentiles AS (
    SELECT hook, event, max(CASE WHEN nth = (95 * n + 99) / 100 THEN rounded_ms END) AS p95_ms
    FROM timed
    GROUP BY hook, event
),
totals AS (
    SELECT
        hook,
        event,
        count(*) AS runs,
        round(avg(duration_ms)::numeric, 3)::double precision AS avg_ms,
        max(duration_ms) AS max_ms,
        count(*) FILTER (WHERE outcome IN ('error', 'timeout', 'invalid', 'refused')) AS failures
    FROM hook_runs
    GROUP BY hook, event
)
SELECT t.hook, t.event, t.runs, t.avg_ms, p.p95_ms, t.max_ms, t.failures
FROM totals AS t
LEFT JOIN percentiles AS p ON p.hook = t.hook AND p.event = t.event
ORDER BY p.p95_ms DESC NULLS LAST, t.hook, t.event;
