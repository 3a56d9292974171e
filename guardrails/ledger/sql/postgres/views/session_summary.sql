-- One row per session: who ran it, when, and what happened in it; newest first.
--
-- PostgreSQL's version of sql/views/session_summary.sql (the columns are described there).
CREATE VIEW session_summary AS
SELECT
    s.session_id,
    s.agent_name,
    s.tenant,
    hookrails_iso(s.started_at) AS started_at,
    hookrails_iso(s.last_seen_at) AS last_seen_at,
    hookrails_iso(s.ended_at) AS ended_at,
    coalesce(c.calls, 0) AS calls,
    coalesce(c.ok, 0) AS ok,
    coalesce(c.denied, 0) AS denied,
    coalesce(c.errors, 0) AS errors,
    coalesce(c.interrupted, 0) AS interrupted,
    coalesce(e.prompts, 0) AS prompts,
    coalesce(e.stops, 0) AS stops,
    coalesce(e.blocked_stops, 0) AS blocked_stops,
    coalesce(h.injected_chars, 0) AS injected_chars,
    round(((hookrails_julianday(s.last_seen_at) - hookrails_julianday(s.started_at)) * 86400.0)::numeric, 3)::double precision AS duration_s
FROM sessions AS s
LEFT JOIN (
    SELECT
        session_id,
        count(*) AS calls,
        count(*) FILTER (WHERE status = 'ok') AS ok,
        count(*) FILTER (WHERE status = 'denied') AS denied,
        count(*) FILTER (WHERE status = 'error') AS errors,
        count(*) FILTER (WHERE status = 'interrupted') AS interrupted
    FROM tool_calls
    GROUP BY session_id
) AS c ON c.session_id = s.session_id
LEFT JOIN (
    SELECT
        session_id,
        count(*) FILTER (WHERE event = 'UserPromptSubmit') AS prompts,
        count(*) FILTER (WHERE event IN ('AgentStop', 'SubagentStop')) AS stops,
        count(*) FILTER (
            WHERE event IN ('AgentStop', 'SubagentStop') AND decision = 'block'
        ) AS blocked_stops
    FROM events
    GROUP BY session_id
) AS e ON e.session_id = s.session_id
LEFT JOIN (
    SELECT s.session_id, sum((r.v ->> 6)::integer) AS injected_chars
    FROM hook_run_sets AS s CROSS JOIN LATERAL jsonb_array_elements(s.runs) WITH ORDINALITY AS r (v, n)
    WHERE (s.flags & 4) != 0
    GROUP BY s.session_id
) AS h ON h.session_id = s.session_id
ORDER BY s.started_at DESC, s.session_id;
