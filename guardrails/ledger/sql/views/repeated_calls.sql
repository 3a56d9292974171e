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
--
-- A group none of whose calls is after rollup_marks' mark (or was pending at it) is read
-- from repeated_rollup (sql/migrations/0008_rollups.sql); another is counted again from
-- tool_calls (by its index): the same answer as grouping tool_calls alone, at the cost of
-- the rows after the mark.
CREATE VIEW repeated_calls AS
WITH touched AS (
    SELECT DISTINCT session_id, tool_name, arguments_hash
    FROM tool_calls
    WHERE id > (SELECT last_id FROM rollup_marks WHERE name = 'tool_calls')
      AND arguments_hash IS NOT NULL
    UNION
    SELECT c.session_id, c.tool_name, c.arguments_hash
    FROM rollup_pending AS p
    CROSS JOIN tool_calls AS c ON c.id = p.id
    WHERE c.arguments_hash IS NOT NULL
),
fresh AS (
    SELECT
        g.session_id,
        g.tool_name,
        g.arguments_hash,
        (
            SELECT count(*) FROM tool_calls AS c
            WHERE c.session_id = g.session_id AND c.tool_name = g.tool_name
              AND c.arguments_hash = g.arguments_hash
        ) AS times,
        (
            SELECT min(c.started_at) FROM tool_calls AS c
            WHERE c.session_id = g.session_id AND c.tool_name = g.tool_name
              AND c.arguments_hash = g.arguments_hash
        ) AS first_at,
        (
            SELECT max(c.started_at) FROM tool_calls AS c
            WHERE c.session_id = g.session_id AND c.tool_name = g.tool_name
              AND c.arguments_hash = g.arguments_hash
        ) AS last_at,
        (
            SELECT group_concat(d.status, ',')
            FROM (
                SELECT DISTINCT c.status
                FROM tool_calls AS c
                WHERE c.session_id = g.session_id AND c.tool_name = g.tool_name
                  AND c.arguments_hash = g.arguments_hash
                ORDER BY c.status
            ) AS d
        ) AS statuses,
        (
            SELECT c.tool_call_arguments FROM tool_calls AS c
            WHERE c.session_id = g.session_id AND c.tool_name = g.tool_name
              AND c.arguments_hash = g.arguments_hash
            ORDER BY c.started_at, c.id
            LIMIT 1
        ) AS example_arguments
    FROM touched AS g
)
SELECT
    session_id, tool_name, arguments_hash, times, first_at, last_at, statuses, example_arguments
FROM (
    SELECT * FROM fresh WHERE times > 1
    UNION ALL
    SELECT
        r.session_id, r.tool_name, r.arguments_hash, r.times, r.first_at, r.last_at,
        r.statuses, r.example_arguments
    FROM repeated_rollup AS r
    WHERE NOT EXISTS (
        SELECT 1 FROM touched AS g
        WHERE g.session_id = r.session_id AND g.tool_name = r.tool_name
          AND g.arguments_hash = r.arguments_hash
    )
)
ORDER BY session_id, first_at, tool_name, arguments_hash;
