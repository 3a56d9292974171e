-- Tool calls made more than once with the same arguments in the same session.
--
-- PostgreSQL's version of sql/views/repeated_calls.sql (the columns are described there).
CREATE VIEW repeated_calls AS
WITH numbered AS (
    SELECT
        session_id,
        tool_name,
        arguments_hash,
        started_at,
        status,
        tool_call_arguments::text AS tool_call_arguments,
        row_number() OVER (
            PARTITION BY session_id, tool_name, arguments_hash ORDER BY started_at, id
        ) AS nth
    FROM tool_calls
    WHERE arguments_hash IS NOT NULL
)
SELECT
    g.session_id,
    g.tool_name,
    g.arguments_hash,
    count(*) AS times,
    hookrails_iso(min(g.started_at)) AS first_at,
    hookrails_iso(max(g.started_at)) AS last_at,
    string_agg(DISTINCT g.status, ',' ORDER BY g.status) AS statuses,
    max(CASE WHEN g.nth = 1 THEN g.tool_call_arguments END) AS example_arguments
FROM numbered AS g
GROUP BY g.session_id, g.tool_name, g.arguments_hash
HAVING count(*) > 1
ORDER BY g.session_id, min(g.started_at), g.tool_name, g.arguments_hash;
