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
-- interrupted calls never count towards the durations. Nearest-rank percentile p over n
-- sorted durations is the value at rank ceil(p * n), computed in integer arithmetic as
-- (n + 1) / 2 for p50 and (95 * n + 99) / 100 for p95. The duration columns are NULL for a
-- tool with no call that ran. Ordered by calls (most first), then tool_name.
CREATE VIEW tool_stats AS
WITH ran AS (
    SELECT
        tool_name,
        duration_ms,
        row_number() OVER (PARTITION BY tool_name ORDER BY duration_ms, id) AS nth,
        count(*) OVER (PARTITION BY tool_name) AS n
    FROM tool_calls
    WHERE status IN ('ok', 'error') AND duration_ms IS NOT NULL
),
durations AS (
    SELECT
        tool_name,
        max(CASE WHEN nth = (n + 1) / 2 THEN duration_ms END) AS p50_ms,
        max(CASE WHEN nth = (95 * n + 99) / 100 THEN duration_ms END) AS p95_ms,
        round(avg(duration_ms), 3) AS avg_ms
    FROM ran
    GROUP BY tool_name
),
counts AS (
    SELECT
        tool_name,
        count(*) AS calls,
        sum(status = 'ok') AS ok,
        sum(status = 'denied') AS denials,
        sum(status = 'error') AS errors,
        sum(status = 'interrupted') AS interrupted,
        max(started_at) AS last_called_at
    FROM tool_calls
    GROUP BY tool_name
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
