-- hookrails ledger, schema 1: sessions, tool calls, hook runs, events, idempotency keys.
-- Column names follow the OpenTelemetry GenAI semantic conventions where one exists
-- (gen_ai.tool.name -> tool_name, gen_ai.tool.call.id -> tool_call_id,
-- gen_ai.tool.call.arguments -> tool_call_arguments, gen_ai.tool.call.result ->
-- tool_call_result, gen_ai.agent.name/.id -> agent_name/agent_id, error.type -> error_type).
-- JSON is stored as TEXT so json_extract() works on it. Times are UTC ISO-8601 text.

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
    pid                  INTEGER,            -- process that wrote the pending row (for recover)
    UNIQUE (session_id, tool_call_id)
);
-- Few indexes on purpose: every one is paid on each write of the hot path.
CREATE INDEX tool_calls_by_hash ON tool_calls (session_id, tool_name, arguments_hash);

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
);
CREATE INDEX events_by_session ON events (session_id, created_at);

CREATE TABLE hook_runs (
    id              INTEGER PRIMARY KEY,
    session_id      TEXT NOT NULL,
    event           TEXT NOT NULL,
    tool_call_id    TEXT,                    -- joins tool_calls (session_id, tool_call_id)
    event_id        INTEGER REFERENCES events (id),
    hook            TEXT NOT NULL,
    matcher         TEXT,
    priority        INTEGER,
    outcome         TEXT NOT NULL CHECK (outcome IN ('allow', 'deny', 'ask', 'block', 'halt',
                    'modify', 'inject', 'noop', 'skipped', 'error', 'timeout', 'invalid', 'refused')),
    duration_ms     REAL,
    error           TEXT,
    injected_chars  INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL
);
CREATE INDEX hook_runs_by_call ON hook_runs (session_id, tool_call_id);

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
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
