-- One row per hook and event: how often it ran, how long it took and how often it failed; slowest first.
--
-- Columns:
--   hook      the hook's name
--   event     the hook event it ran for (PreToolUse, UserPromptSubmit, Stop, ...)
--   runs      every recorded run, whatever its outcome
--   avg_ms    mean duration in ms over runs with a duration_ms, rounded to 3 decimals
--   p95_ms    95th percentile duration in ms, nearest rank (the value at rank ceil(0.95 * n),
--             computed as (95 * n + 99) / 100), over runs with a duration_ms
--   max_ms    longest duration in ms
--   failures  runs whose outcome is 'error', 'timeout', 'invalid' or 'refused'
--
-- The duration columns are NULL when no run has a duration_ms. Ordered by p95_ms (slowest
-- first, NULL last), then hook, then event.
CREATE VIEW slow_hooks AS
WITH timed AS (
    SELECT
        hook,
        event,
        duration_ms,
        row_number() OVER (PARTITION BY hook, event ORDER BY duration_ms, id) AS nth,
        count(*) OVER (PARTITION BY hook, event) AS n
    FROM hook_runs
    WHERE duration_ms IS NOT NULL
),
percentiles AS (
    SELECT hook, event, max(CASE WHEN nth = (95 * n + 99) / 100 THEN duration_ms END) AS p95_ms
    FROM timed
    GROUP BY hook, event
),
totals AS (
    SELECT
        hook,
        event,
        count(*) AS runs,
        round(avg(duration_ms), 3) AS avg_ms,
        max(duration_ms) AS max_ms,
        sum(outcome IN ('error', 'timeout', 'invalid', 'refused')) AS failures
    FROM hook_runs
    GROUP BY hook, event
)
SELECT t.hook, t.event, t.runs, t.avg_ms, p.p95_ms, t.max_ms, t.failures
FROM totals AS t
LEFT JOIN percentiles AS p ON p.hook = t.hook AND p.event = t.event
ORDER BY p.p95_ms DESC NULLS LAST, t.hook, t.event;
