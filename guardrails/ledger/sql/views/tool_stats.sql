-- One row per tool: how often it was called, how each call ended, and how long the calls that ran took.
--
-- Columns:
--   tool_name       gen_ai.tool.name
--   calls           every recorded call, whatever its status (pending ones included)
--   ok              calls with status 'ok'
--   denials         calls with status 'denied' (stopped before running)
--   errors          calls with status 'error'
--   interrupted     calls with status 'interrupted'
--   p50_ms          median duration in ms, nearest rank, over calls that ran (see below)
--   p95_ms          95th percentile duration in ms, nearest rank, over calls that ran
--   avg_ms          mean duration in ms over calls that ran, rounded to 3 decimals
--   last_called_at  started_at of the most recent call (UTC ISO-8601 text)
--
-- "Calls that ran" are status 'ok' or 'error' with a duration_ms; denied, pending and
-- interrupted calls never count towards the durations. The percentiles are nearest rank
-- over the durations rounded to 3 significant digits (12.345 ms counts as 12.3): the
-- rounded value at rank ceil(p * n), computed in integer arithmetic as (n + 1) / 2 for p50
-- and (95 * n + 99) / 100 for p95; avg_ms is over the exact durations. The duration
-- columns are NULL for a tool with no call that ran. Ordered by calls (most first), then
-- tool_name.
--
-- The calls up to rollup_marks' mark are read from tool_rollup and tool_duration_rollup
-- (sql/migrations/0008_rollups.sql), the later ones (and the status of calls that were
-- pending at the mark) from tool_calls: the same answer as aggregating tool_calls alone,
-- at the cost of the rows after the mark.
CREATE VIEW tool_stats AS
WITH live AS (
    SELECT tool_name, status, duration_ms, started_at, 1 AS new
    FROM tool_calls
    WHERE id > (SELECT last_id FROM rollup_marks WHERE name = 'tool_calls')
    UNION ALL
    -- a call the rollup counted while it was pending: its status now (counted once)
    SELECT c.tool_name, c.status, c.duration_ms, c.started_at, 0
    FROM rollup_pending AS p
    CROSS JOIN tool_calls AS c ON c.id = p.id
    WHERE c.status != 'pending'
),
counts AS (
    SELECT
        tool_name,
        sum(calls) AS calls,
        sum(ok) AS ok,
        sum(denials) AS denials,
        sum(errors) AS errors,
        sum(interrupted) AS interrupted,
        max(last_called_at) AS last_called_at
    FROM (
        SELECT tool_name, calls, ok, denials, errors, interrupted, last_called_at
        FROM tool_rollup
        UNION ALL
        SELECT
            tool_name,
            sum(new),
            sum(status = 'ok'),
            sum(status = 'denied'),
            sum(status = 'error'),
            sum(status = 'interrupted'),
            max(started_at)
        FROM live
        GROUP BY tool_name
    )
    GROUP BY tool_name
),
buckets AS (  -- a duration may come twice (rollup and live rows): the running
    -- sums below rank them alike, so they are not grouped again (a sort less)
    SELECT tool_name, duration_ms, n, sum_ms FROM tool_duration_rollup
    UNION ALL
    SELECT tool_name, CAST(printf('%.2e', duration_ms) AS REAL), count(*), sum(duration_ms)
    FROM live
    WHERE status IN ('ok', 'error') AND duration_ms IS NOT NULL
    GROUP BY 1, 2
),
totals AS (  -- each tool's count and sum, grouped once (a window over the whole
    -- partition costs as much again as the running sum)
    SELECT tool_name, sum(n) AS n, sum(sum_ms) AS sum_ms FROM buckets GROUP BY tool_name
),
ranked AS (
    SELECT
        tool_name,
        duration_ms,
        sum(n) OVER (PARTITION BY tool_name ORDER BY duration_ms ROWS UNBOUNDED PRECEDING)
            AS upto
    FROM buckets
),
durations AS (
    SELECT
        r.tool_name,
        min(CASE WHEN r.upto >= (t.n + 1) / 2 THEN r.duration_ms END) AS p50_ms,
        min(CASE WHEN r.upto >= (95 * t.n + 99) / 100 THEN r.duration_ms END) AS p95_ms,
        round(t.sum_ms / t.n, 3) AS avg_ms
    FROM ranked AS r
    JOIN totals AS t ON t.tool_name = r.tool_name
    GROUP BY r.tool_name
)
SELECT
    c.tool_name,
    c.calls,
    c.ok,
    c.denials,
    c.errors,
    c.interrupted,
    d.p50_ms,
    d.p95_ms,
    d.avg_ms,
    c.last_called_at
FROM counts AS c
LEFT JOIN durations AS d ON d.tool_name = c.tool_name
ORDER BY c.calls DESC, c.tool_name;
