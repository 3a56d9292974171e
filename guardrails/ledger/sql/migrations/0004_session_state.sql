-- What a session remembers across processes (docs/design.md §7): a Claude Code command
-- hook is a new process per event, so a halt and the turn's injection budget live here,
-- one row per session and agent (the definition's name). Read when a session is new to a
-- process; changed only inside the transaction that records the event changing it.

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
