-- One row per hook and event: how often it ran, how long it took and how often it failed; slowest first.
--
-- Columns:
--   hook      the hook's name
--   event     the hook event it ran for (PreToolUse, UserPromptSubmit, Stop, ...)
--   runs      every recorded run, whatever its outcome
--   avg_ms    mean duration in ms over runs with a duration_ms, rounded to 3 decimals
--   p95_ms    95th percentile duration in ms, nearest rank over the durations rounded to 3
--             significant digits (the rounded value at rank ceil(0.95 * n), computed as
--             (95 * n + 99) / 100), over runs with a duration_ms
--   max_ms    longest duration in ms
--   failures  runs whose outcome is 'error', 'timeout', 'invalid' or 'refused'
--
-- avg_ms and max_ms are over the exact durations. The duration columns are NULL when no run
-- has a duration_ms. Ordered by p95_ms (slowest first, NULL last), then hook, then event.
--
-- The runs of the hook_run_sets up to rollup_marks' mark are read from hook_rollup and
-- hook_duration_rollup (sql/migrations/0008_rollups.sql), the later ones from hook_run_sets:
-- the same answer as aggregating hook_runs alone, at the cost of the rows after the mark.
CREATE VIEW slow_hooks AS
WITH live AS (
    SELECT
        s.event,
        r.value ->> 0 AS hook,
        r.value ->> 3 AS outcome,
        r.value ->> 4 AS duration_ms
    FROM hook_run_sets AS s, json_each(s.runs) AS r
    WHERE s.id > (SELECT last_id FROM rollup_marks WHERE name = 'hook_run_sets')
),
totals AS (
    SELECT hook, event, sum(runs) AS runs, sum(failures) AS failures
    FROM (
        SELECT hook, event, runs, failures FROM hook_rollup
        UNION ALL
        SELECT hook, event, count(*), sum(outcome IN ('error', 'timeout', 'invalid', 'refused'))
        FROM live
        GROUP BY hook, event
    )
    GROUP BY hook, event
),
buckets AS (  -- a duration may come twice (rollup and live rows): the running
    -- sums below rank them alike, so they are not grouped again (a sort less)
    SELECT hook, event, duration_ms, n, sum_ms, max_ms FROM hook_duration_rollup
    UNION ALL
    SELECT
        hook,
        event,
        CAST(printf('%.2e', duration_ms) AS REAL),
        count(*),
        sum(duration_ms),
        max(duration_ms)
    FROM live
    WHERE duration_ms IS NOT NULL
    GROUP BY 1, 2, 3
),
parts AS (  -- each hook's count, sum and longest, grouped once (a window over the whole
    -- partition costs as much again as the running sum)
    SELECT hook, event, sum(n) AS n, sum(sum_ms) AS sum_ms, max(max_ms) AS max_ms
    FROM buckets
    GROUP BY hook, event
),
ranked AS (
    SELECT
        hook,
        event,
        duration_ms,
        sum(n) OVER (PARTITION BY hook, event ORDER BY duration_ms ROWS UNBOUNDED PRECEDING)
            AS upto
    FROM buckets
),
durations AS (
    SELECT
        r.hook,
        r.event,
        round(p.sum_ms / p.n, 3) AS avg_ms,
        min(CASE WHEN r.upto >= (95 * p.n + 99) / 100 THEN r.duration_ms END) AS p95_ms,
        p.max_ms
    FROM ranked AS r
    JOIN parts AS p ON p.hook = r.hook AND p.event = r.event
    GROUP BY r.hook, r.event
)
SELECT t.hook, t.event, t.runs, d.avg_ms, d.p95_ms, d.max_ms, t.failures
FROM totals AS t
LEFT JOIN durations AS d ON d.hook = t.hook AND d.event = t.event
ORDER BY d.p95_ms DESC NULLS LAST, t.hook, t.event;
