-- Generated from ledger/migrations and ledger/views by `make schemas`; do not edit.
-- Schema version 9.

CREATE TABLE _hookrails_migrations (number INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL);

CREATE TABLE denial_rollup (
    hook          TEXT NOT NULL,
    matcher       TEXT NOT NULL,
    hook_outcome  TEXT NOT NULL,
    denials       INTEGER NOT NULL,
    last_at       TEXT,
    PRIMARY KEY (hook, matcher, hook_outcome)
) WITHOUT ROWID;

CREATE TABLE events (
    id              INTEGER PRIMARY KEY,
    session_id      TEXT NOT NULL,
    event           TEXT NOT NULL,           -- UserPromptSubmit, AgentStop, SubagentStop, SessionStart, ...
    agent_id        TEXT,
    agent_type      TEXT,
    payload         TEXT,                    -- JSON of the event (redacted)
    decision        TEXT NOT NULL CHECK (decision IN ('allow', 'block', 'halt')),
    reason          TEXT,
    injected_chars  INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL
, tenant_id TEXT);

CREATE TABLE hook_duration_rollup (
    hook         TEXT NOT NULL,
    event        TEXT NOT NULL,
    duration_ms  REAL NOT NULL,
    n            INTEGER NOT NULL,
    sum_ms       REAL NOT NULL,       -- the exact durations' sum
    max_ms       REAL NOT NULL,       -- the exact longest
    PRIMARY KEY (hook, event, duration_ms)
) WITHOUT ROWID;

CREATE TABLE hook_rollup (
    hook      TEXT NOT NULL,
    event     TEXT NOT NULL,
    runs      INTEGER NOT NULL,
    failures  INTEGER NOT NULL,
    PRIMARY KEY (hook, event)
) WITHOUT ROWID;

CREATE TABLE hook_run_sets (
    id            INTEGER PRIMARY KEY,
    session_id    TEXT NOT NULL,
    event         TEXT NOT NULL,
    tool_call_id  TEXT,                      -- joins tool_calls (session_id, tool_call_id)
    event_id      INTEGER REFERENCES events (id),
    created_at    TEXT NOT NULL,
    -- JSON: [[hook, matcher, priority, outcome, duration_ms, error, injected_chars], ...]
    runs          TEXT NOT NULL,
    flags         INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE idempotency_keys (
    key            TEXT PRIMARY KEY,         -- sha256 of scope + canonical JSON of tool and key fields
    scope          TEXT NOT NULL CHECK (scope IN ('session', 'agent', 'global')),
    session_id     TEXT,
    agent_id       TEXT,
    tool_name      TEXT NOT NULL,
    payload_hash   TEXT NOT NULL,            -- sha256 of the whole canonical input (conflict detection)
    state          TEXT NOT NULL CHECK (state IN ('in_progress', 'completed', 'failed')),
    tool_call_id   TEXT,
    result         TEXT,                     -- JSON of the stored result, for replay
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    expires_at     TEXT
, lease_expires_at TEXT);

CREATE TABLE repeated_rollup (
    session_id         TEXT NOT NULL,
    tool_name          TEXT NOT NULL,
    arguments_hash     TEXT NOT NULL,
    times              INTEGER NOT NULL,
    first_at           TEXT NOT NULL,
    last_at            TEXT NOT NULL,
    statuses           TEXT,
    example_arguments  TEXT,
    PRIMARY KEY (session_id, tool_name, arguments_hash)
) WITHOUT ROWID;

CREATE TABLE rollup_marks (
    name     TEXT PRIMARY KEY,            -- the table summarized: tool_calls, hook_run_sets
    last_id  INTEGER NOT NULL DEFAULT 0   -- its rows with id <= last_id are in the rollups
) WITHOUT ROWID;

CREATE TABLE rollup_pending (id INTEGER PRIMARY KEY);

CREATE TABLE session_state (
    session_id       TEXT NOT NULL,
    agent_name       TEXT NOT NULL,              -- the definition's name
    turn             INTEGER NOT NULL DEFAULT 0, -- turns started (prompts, session starts)
    turn_started_at  TEXT,
    halted           TEXT,                       -- why a hook halted the agent this turn
    injected_chars   INTEGER NOT NULL DEFAULT 0, -- context injected for the model this turn
    prompt_id        TEXT,                       -- the prompt this turn answers (Claude's prompt_id)
    earlier_prompts  TEXT,                       -- JSON: prompt ids of earlier turns, newest first
    updated_at       TEXT NOT NULL,
    PRIMARY KEY (session_id, agent_name)
) WITHOUT ROWID;

CREATE TABLE sessions (
    session_id    TEXT PRIMARY KEY,          -- gen_ai.conversation.id (Claude session_id)
    agent_name    TEXT,                      -- gen_ai.agent.name
    tenant        TEXT,
    cwd           TEXT,
    started_at    TEXT NOT NULL,
    last_seen_at  TEXT NOT NULL,
    ended_at      TEXT,
    end_reason    TEXT
);

CREATE TABLE tool_calls (
    id                   INTEGER PRIMARY KEY,
    session_id           TEXT NOT NULL,
    agent_name           TEXT,               -- gen_ai.agent.name
    agent_id             TEXT,               -- gen_ai.agent.id: the subagent, NULL on the main thread
    agent_type           TEXT,
    tool_call_id         TEXT NOT NULL,      -- gen_ai.tool.call.id (Claude tool_use_id)
    tool_name            TEXT NOT NULL,      -- gen_ai.tool.name
    tool_call_arguments  TEXT,               -- gen_ai.tool.call.arguments: JSON as the model sent it
    final_arguments      TEXT,               -- JSON the tool ran with, after hook rewrites
    arguments_hash       TEXT,               -- sha256 of the canonical JSON of tool_call_arguments
    decision             TEXT CHECK (decision IN ('allow', 'deny', 'ask')),
    reason               TEXT,
    status               TEXT NOT NULL DEFAULT 'pending'
                         CHECK (status IN ('pending', 'ok', 'error', 'denied', 'interrupted')),
    tool_call_result     TEXT,               -- gen_ai.tool.call.result: JSON, redacted and capped
    result_truncated     INTEGER NOT NULL DEFAULT 0,
    result_bytes         INTEGER,            -- size before the cap
    error_type           TEXT,               -- error.type
    error_message        TEXT,
    started_at           TEXT NOT NULL,
    finished_at          TEXT,
    duration_ms          REAL,
    pid                  INTEGER, annotations TEXT, tenant_id TEXT,            -- process that wrote the pending row (for recover)
    UNIQUE (session_id, tool_call_id)
);

CREATE TABLE tool_duration_rollup (
    tool_name    TEXT NOT NULL,
    duration_ms  REAL NOT NULL,
    n            INTEGER NOT NULL,
    sum_ms       REAL NOT NULL,       -- the exact durations' sum
    PRIMARY KEY (tool_name, duration_ms)
) WITHOUT ROWID;

CREATE TABLE tool_rollup (
    tool_name       TEXT PRIMARY KEY,
    calls           INTEGER NOT NULL,
    ok              INTEGER NOT NULL,
    denials         INTEGER NOT NULL,
    errors          INTEGER NOT NULL,
    interrupted     INTEGER NOT NULL,
    last_called_at  TEXT
) WITHOUT ROWID;

CREATE INDEX events_by_kind ON events (event, decision);

CREATE INDEX events_by_session ON events (session_id, created_at);

CREATE INDEX events_by_session_event ON events (session_id, event);

CREATE INDEX hook_run_sets_by_event ON hook_run_sets (event_id) WHERE event_id IS NOT NULL;

CREATE INDEX hook_run_sets_failed ON hook_run_sets (created_at) WHERE (flags & 2) != 0;

CREATE INDEX hook_run_sets_notable ON hook_run_sets (session_id, tool_call_id) WHERE flags != 0;

CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);

CREATE INDEX sessions_by_start ON sessions (started_at DESC, session_id);

CREATE INDEX tool_calls_by_hash ON tool_calls (session_id, tool_name, arguments_hash);

CREATE INDEX tool_calls_by_start ON tool_calls (started_at);

CREATE INDEX tool_calls_by_tenant ON tool_calls (tenant_id, started_at) WHERE tenant_id IS NOT NULL;

CREATE INDEX tool_calls_denied ON tool_calls (started_at) WHERE status = 'denied';

CREATE INDEX tool_calls_failed ON tool_calls (coalesce(finished_at, started_at))
    WHERE status IN ('error', 'interrupted');

CREATE VIEW denials AS
SELECT
    t.started_at,
    t.session_id,
    t.agent_name,
    t.agent_id,
    t.tool_name,
    t.tool_call_id,
    t.tool_call_arguments,
    t.reason,
    t.run ->> 0 AS hook,
    t.run ->> 1 AS matcher,
    t.run ->> 3 AS hook_outcome
FROM (
    SELECT
        c.*,
        (
            SELECT r.value
            FROM hook_run_sets AS s, json_each(s.runs) AS r
            WHERE s.session_id = c.session_id
              AND s.tool_call_id = c.tool_call_id
              AND s.flags != 0
              AND r.value ->> 3 IN ('deny', 'error', 'timeout', 'invalid', 'refused')
            ORDER BY s.id, r.key
            LIMIT 1
        ) AS run
    FROM tool_calls AS c
    WHERE c.status = 'denied'
) AS t
ORDER BY t.started_at DESC, t.id DESC;

CREATE VIEW failures AS
SELECT
    coalesce(finished_at, started_at) AS at,
    'tool' AS kind,
    session_id,
    NULL AS event,
    tool_name AS name,
    status,
    tool_call_id,
    error_type,
    error_message
FROM tool_calls
WHERE status IN ('error', 'interrupted')
UNION ALL
SELECT
    s.created_at,
    'hook',
    s.session_id,
    s.event,
    r.value ->> 0,
    r.value ->> 3,
    s.tool_call_id,
    NULL,
    r.value ->> 5
FROM hook_run_sets AS s, json_each(s.runs) AS r
WHERE (s.flags & 2) != 0 AND r.value ->> 3 IN ('error', 'timeout', 'invalid', 'refused')
ORDER BY 1 DESC, 2;

CREATE VIEW hook_runs AS
SELECT
    s.id * 65536 + r.key AS id,
    s.session_id,
    s.event,
    s.tool_call_id,
    s.event_id,
    r.value ->> 0 AS hook,
    r.value ->> 1 AS matcher,
    r.value ->> 2 AS priority,
    r.value ->> 3 AS outcome,
    r.value ->> 4 AS duration_ms,
    r.value ->> 5 AS error,
    r.value ->> 6 AS injected_chars,
    s.created_at,
    s.flags
FROM hook_run_sets AS s, json_each(s.runs) AS r;

CREATE TRIGGER hook_runs_insert INSTEAD OF INSERT ON hook_runs
BEGIN
    INSERT INTO hook_run_sets (
        id, session_id, event, tool_call_id, event_id, created_at, runs, flags
    )
    VALUES (
        NEW.id,
        NEW.session_id,
        NEW.event,
        NEW.tool_call_id,
        NEW.event_id,
        NEW.created_at,
        json_array(json_array(
            NEW.hook, NEW.matcher, NEW.priority, NEW.outcome, NEW.duration_ms, NEW.error,
            coalesce(NEW.injected_chars, 0)
        )),
        (NEW.outcome IN ('deny', 'block', 'ask', 'halt'))
            | ((NEW.outcome IN ('error', 'timeout', 'invalid', 'refused')) << 1)
            | ((NEW.outcome = 'inject' OR coalesce(NEW.injected_chars, 0) > 0) << 2)
    );
END;

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

CREATE VIEW slow_hooks AS
WITH live AS (
    SELECT
        s.event,
        r.value ->> 0 AS hook,
        r.value ->> 3 AS outcome,
        r.value ->> 4 AS duration_ms
    FROM hook_run_sets AS s, json_each(s.runs) AS r
    WHERE s.id > (SELECT last_id FROM rollup_marks WHERE name = 'hook_run_sets')
),
totals AS (
    SELECT hook, event, sum(runs) AS runs, sum(failures) AS failures
    FROM (
        SELECT hook, event, runs, failures FROM hook_rollup
        UNION ALL
        SELECT hook, event, count(*), sum(outcome IN ('error', 'timeout', 'invalid', 'refused'))
        FROM live
        GROUP BY hook, event
    )
    GROUP BY hook, event
),
buckets AS (  -- a duration may come twice (rollup and live rows): the running
    -- sums below rank them alike, so they are not grouped again (a sort less)
    SELECT hook, event, duration_ms, n, sum_ms, max_ms FROM hook_duration_rollup
    UNION ALL
    SELECT
        hook,
        event,
        CAST(printf('%.2e', duration_ms) AS REAL),
        count(*),
        sum(duration_ms),
        max(duration_ms)
    FROM live
    WHERE duration_ms IS NOT NULL
    GROUP BY 1, 2, 3
),
parts AS (  -- each hook's count, sum and longest, grouped once (a window over the whole
    -- partition costs as much again as the running sum)
    SELECT hook, event, sum(n) AS n, sum(sum_ms) AS sum_ms, max(max_ms) AS max_ms
    FROM buckets
    GROUP BY hook, event
),
ranked AS (
    SELECT
        hook,
        event,
        duration_ms,
        sum(n) OVER (PARTITION BY hook, event ORDER BY duration_ms ROWS UNBOUNDED PRECEDING)
            AS upto
    FROM buckets
),
durations AS (
    SELECT
        r.hook,
        r.event,
        round(p.sum_ms / p.n, 3) AS avg_ms,
        min(CASE WHEN r.upto >= (95 * p.n + 99) / 100 THEN r.duration_ms END) AS p95_ms,
        p.max_ms
    FROM ranked AS r
    JOIN parts AS p ON p.hook = r.hook AND p.event = r.event
    GROUP BY r.hook, r.event
)
SELECT t.hook, t.event, t.runs, d.avg_ms, d.p95_ms, d.max_ms, t.failures
FROM totals AS t
LEFT JOIN durations AS d ON d.hook = t.hook AND d.event = t.event
ORDER BY d.p95_ms DESC NULLS LAST, t.hook, t.event;

CREATE VIEW tool_stats AS
WITH live AS (
    SELECT tool_name, status, duration_ms, started_at, 1 AS new
    FROM tool_calls
    WHERE id > (SELECT last_id FROM rollup_marks WHERE name = 'tool_calls')
    UNION ALL
    -- a call the rollup counted while it was pending: its status now (counted once)
    SELECT c.tool_name, c.status, c.duration_ms, c.started_at, 0
    FROM rollup_pending AS p
    CROSS JOIN tool_calls AS c ON c.id = p.id
    WHERE c.status != 'pending'
),
counts AS (
    SELECT
        tool_name,
        sum(calls) AS calls,
        sum(ok) AS ok,
        sum(denials) AS denials,
        sum(errors) AS errors,
        sum(interrupted) AS interrupted,
        max(last_called_at) AS last_called_at
    FROM (
        SELECT tool_name, calls, ok, denials, errors, interrupted, last_called_at
        FROM tool_rollup
        UNION ALL
        SELECT
            tool_name,
            sum(new),
            sum(status = 'ok'),
            sum(status = 'denied'),
            sum(status = 'error'),
            sum(status = 'interrupted'),
            max(started_at)
        FROM live
        GROUP BY tool_name
    )
    GROUP BY tool_name
),
buckets AS (  -- a duration may come twice (rollup and live rows): the running
    -- sums below rank them alike, so they are not grouped again (a sort less)
    SELECT tool_name, duration_ms, n, sum_ms FROM tool_duration_rollup
    UNION ALL
    SELECT tool_name, CAST(printf('%.2e', duration_ms) AS REAL), count(*), sum(duration_ms)
    FROM live
    WHERE status IN ('ok', 'error') AND duration_ms IS NOT NULL
    GROUP BY 1, 2
),
totals AS (  -- each tool's count and sum, grouped once (a window over the whole
    -- partition costs as much again as the running sum)
    SELECT tool_name, sum(n) AS n, sum(sum_ms) AS sum_ms FROM buckets GROUP BY tool_name
),
ranked AS (
    SELECT
        tool_name,
        duration_ms,
        sum(n) OVER (PARTITION BY tool_name ORDER BY duration_ms ROWS UNBOUNDED PRECEDING)
            AS upto
    FROM buckets
),
durations AS (
    SELECT
        r.tool_name,
        min(CASE WHEN r.upto >= (t.n + 1) / 2 THEN r.duration_ms END) AS p50_ms,
        min(CASE WHEN r.upto >= (95 * t.n + 99) / 100 THEN r.duration_ms END) AS p95_ms,
        round(t.sum_ms / t.n, 3) AS avg_ms
    FROM ranked AS r
    JOIN totals AS t ON t.tool_name = r.tool_name
    GROUP BY r.tool_name
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
