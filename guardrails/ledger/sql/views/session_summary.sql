-- One row per session: who ran it, when, and what happened in it; newest first.
--
-- Columns:
--   session_id      gen_ai.conversation.id
--   agent_name      gen_ai.agent.name
--   tenant          the tenant the session ran for
--   started_at      first seen (UTC ISO-8601 text)
--   last_seen_at    last activity
--   ended_at        when the session ended; NULL while it is open
--   calls           tool calls, whatever their status
--   ok              tool calls with status 'ok'
--   denied          tool calls with status 'denied'
--   errors          tool calls with status 'error'
--   interrupted     tool calls with status 'interrupted'
--   prompts         'UserPromptSubmit' events
--   stops           'AgentStop' and 'SubagentStop' events
--   blocked_stops   those stop events whose decision is 'block' (the agent was sent back to work)
--   injected_chars  characters hooks injected into the context (sum of hook_runs.injected_chars)
--   duration_s      seconds from started_at to last_seen_at (via julianday), rounded to 3 decimals
--
-- Sessions with no calls, events or hook runs count 0. Ordered by started_at (newest first),
-- then session_id.
CREATE VIEW session_summary AS
SELECT
    s.session_id,
    s.agent_name,
    s.tenant,
    s.started_at,
    s.last_seen_at,
    s.ended_at,
    coalesce(c.calls, 0) AS calls,
    coalesce(c.ok, 0) AS ok,
    coalesce(c.denied, 0) AS denied,
    coalesce(c.errors, 0) AS errors,
    coalesce(c.interrupted, 0) AS interrupted,
    coalesce(e.prompts, 0) AS prompts,
    coalesce(e.stops, 0) AS stops,
    coalesce(e.blocked_stops, 0) AS blocked_stops,
    coalesce(h.injected_chars, 0) AS injected_chars,
    round((julianday(s.last_seen_at) - julianday(s.started_at)) * 86400.0, 3) AS duration_s
FROM sessions AS s
LEFT JOIN (
    SELECT
        session_id,
        count(*) AS calls,
        sum(status = 'ok') AS ok,
        sum(status = 'denied') AS denied,
        sum(status = 'error') AS errors,
        sum(status = 'interrupted') AS interrupted
    FROM tool_calls
    GROUP BY session_id
) AS c ON c.session_id = s.session_id
LEFT JOIN (
    SELECT
        session_id,
        sum(event = 'UserPromptSubmit') AS prompts,
        sum(event IN ('AgentStop', 'SubagentStop')) AS stops,
        sum(event IN ('AgentStop', 'SubagentStop') AND decision = 'block') AS blocked_stops
    FROM events
    GROUP BY session_id
) AS e ON e.session_id = s.session_id
LEFT JOIN (
    SELECT session_id, sum(injected_chars) AS injected_chars
    FROM hook_runs
    GROUP BY session_id
) AS h ON h.session_id = s.session_id
ORDER BY s.started_at DESC, s.session_id;
