-- Tool calls made more than once with the same arguments in the same session.
--
-- Columns:
--   session_id         gen_ai.conversation.id
--   tool_name          gen_ai.tool.name
--   arguments_hash     sha256 of the canonical JSON of the arguments (equal hash = same call)
--   times              how many calls share session_id, tool_name and arguments_hash (2 or more)
--   first_at           started_at of the earliest of them (UTC ISO-8601 text)
--   last_at            started_at of the latest of them
--   statuses           the distinct statuses among them, alphabetical, comma-separated
--                      (e.g. 'denied,ok')
--   example_arguments  tool_call_arguments of the earliest of them, as the model sent them
--
-- Calls without an arguments_hash are never grouped. Ordered by session_id, then first_at,
-- then tool_name, then arguments_hash.
CREATE VIEW repeated_calls AS
WITH numbered AS (
    SELECT
        session_id,
        tool_name,
        arguments_hash,
        started_at,
        tool_call_arguments,
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
    min(g.started_at) AS first_at,
    max(g.started_at) AS last_at,
    (
        SELECT group_concat(d.status, ',')
        FROM (
            SELECT DISTINCT s.status
            FROM tool_calls AS s
            WHERE s.session_id = g.session_id
              AND s.tool_name = g.tool_name
              AND s.arguments_hash = g.arguments_hash
            ORDER BY s.status
        ) AS d
    ) AS statuses,
    max(CASE WHEN g.nth = 1 THEN g.tool_call_arguments END) AS example_arguments
FROM numbered AS g
GROUP BY g.session_id, g.tool_name, g.arguments_hash
HAVING count(*) > 1
ORDER BY g.session_id, first_at, g.tool_name, g.arguments_hash;
