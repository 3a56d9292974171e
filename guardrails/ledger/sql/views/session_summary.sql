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
-- Each count is a lookup of that session's rows (correlated, by index), so the first rows
-- of the newest sessions cost their own rows only, not a pass over the whole ledger.
CREATE VIEW session_summary AS
SELECT
    s.session_id,
    s.agent_name,
    s.tenant,
    s.started_at,
    s.last_seen_at,
    s.ended_at,
    (SELECT count(*) FROM tool_calls AS c WHERE c.session_id = s.session_id) AS calls,
    (SELECT count(*) FROM tool_calls AS c WHERE c.session_id = s.session_id AND c.status = 'ok')
        AS ok,
    (
        SELECT count(*) FROM tool_calls AS c
        WHERE c.session_id = s.session_id AND c.status = 'denied'
    ) AS denied,
    (
        SELECT count(*) FROM tool_calls AS c
        WHERE c.session_id = s.session_id AND c.status = 'error'
    ) AS errors,
    (
        SELECT count(*) FROM tool_calls AS c
        WHERE c.session_id = s.session_id AND c.status = 'interrupted'
    ) AS interrupted,
    (
        SELECT count(*) FROM events AS e
        WHERE e.session_id = s.session_id AND e.event = 'UserPromptSubmit'
    ) AS prompts,
    (
        SELECT count(*) FROM events AS e
        WHERE e.session_id = s.session_id AND e.event IN ('AgentStop', 'SubagentStop')
    ) AS stops,
    (
        SELECT count(*) FROM events AS e
        WHERE e.session_id = s.session_id AND e.event IN ('AgentStop', 'SubagentStop')
          AND e.decision = 'block'
    ) AS blocked_stops,
    (
        SELECT coalesce(sum(r.value ->> 6), 0) FROM hook_run_sets AS h, json_each(h.runs) AS r
        WHERE h.session_id = s.session_id AND h.flags != 0 AND (h.flags & 4) != 0
    ) AS injected_chars,
    round((julianday(s.last_seen_at) - julianday(s.started_at)) * 86400.0, 3) AS duration_s
FROM sessions AS s
ORDER BY s.started_at DESC, s.session_id;
