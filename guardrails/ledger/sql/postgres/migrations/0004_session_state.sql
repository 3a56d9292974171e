-- What a session remembers across processes, as sql/migrations/0004_session_state.sql; a
-- record locks its row (SELECT ... FOR UPDATE) from its read to its write.

CREATE TABLE session_state (
    session_id       text NOT NULL,
    agent_name       text NOT NULL,
    turn             integer NOT NULL DEFAULT 0,
    turn_started_at  timestamptz,
    halted           text,
    injected_chars   integer NOT NULL DEFAULT 0,
    prompt_id        text,
    earlier_prompts  text,
    updated_at       timestamptz NOT NULL,
    PRIMARY KEY (session_id, agent_name)
);
