-- Denied tool calls per tool, with the most common denial reason.
--
-- Columns: tool_name, denials (denied calls), top_reason (the most frequent reason; ties go
-- to the alphabetically first non-NULL reason), top_reason_count (calls denied with it).
-- Most denied tool first.
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
        sum(n) OVER (PARTITION BY tool_name) AS denials,
        row_number() OVER (
            PARTITION BY tool_name ORDER BY n DESC, reason IS NULL, reason
        ) AS nth
    FROM reasons
)
SELECT tool_name, denials, reason AS top_reason, n AS top_reason_count
FROM ranked
WHERE nth = 1
ORDER BY denials DESC, tool_name;
