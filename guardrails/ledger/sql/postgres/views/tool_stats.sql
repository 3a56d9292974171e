-- One row per tool: how often it was called, how each call ended, and how long the calls that ran took.
--
-- PostgreSQL's version of sql/views/tool_stats.sql (the columns are described
-- there). No rollups here (sql/postgres/migrations/0008_rollups.sql): the same answers from
-- the tables.
CREATE VIEW tool_stats AS
WITH ran AS (
    SELECT
        tool_name,
        duration_ms,
        -- 3 significant digits, as SQLite's printf('%.2e'): the value the percentiles rank
        to_char(duration_ms, '9.99EEEE')::double precision AS rounded_ms,
        row_number() OVER (PARTITION BY tool_name ORDER BY duration_ms, id) AS nth,
        count(*) OVER (PARTITION BY tool_name) AS n
    FROM tool_calls
    WHERE status IN ('ok', 'error') AND duration_ms IS NOT NULL
),
durations AS (
    SELECT
        tool_name,
        max(CASE WHEN nth = (n + 1) / 2 THEN rounded_ms END) AS p50_ms,
        max(CASE WHEN nth = (95 * n + 99) / 100 THEN rounded_ms END) AS p95_ms,
        round(avg(duration_ms)::numeric, 3)::double precision AS avg_ms
    FROM ran
    GROUP BY tool_name
),
counts AS (
    SELECT
        tool_name,
        count(*) AS calls,
        count(*) FILTER (WHERE status = 'ok') AS ok,
        count(*) FILTER (WHERE status = 'denied') AS denials,
        count(*) FILTER (WHERE status = 'error') AS errors,
        count(*) FILTER (WHERE status = 'interrupted') AS interrupted,
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
    hookrails_iso(c.last_called_at) AS last_called_at
FROM counts AS c
LEFT JOIN durations AS d ON d.tool_name = c.tool_name
ORDER BY c.calls DESC, c.tool_name;
