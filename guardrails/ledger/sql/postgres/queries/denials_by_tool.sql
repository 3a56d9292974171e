-- Denied tool calls per tool, with the most common denial reason.
--
-- PostgreSQL's version of sql/queries/denials_by_tool.sql (the columns are described there):
-- a sum over a count is numeric here, so it is cast back to a whole number.
WITH reasons AS (
    SELECT tool_name, reason, count(*) AS n
    FROM tool_calls
    WHERE status = 'denied'
    GROUP BY tool_name, reason
),
ranked AS (
    SELECT
        tool_name,
        reason,
        n,
        (sum(n) OVER (PARTITION BY tool_name))::bigint AS denials,
        row_number() OVER (
            PARTITION BY tool_name ORDER BY n DESC, reason IS NULL, reason
        ) AS nth
    FROM reasons
)
SELECT tool_name, denials, reason AS top_reason, n AS top_reason_count
FROM ranked
WHERE nth = 1
ORDER BY denials DESC, tool_name;
