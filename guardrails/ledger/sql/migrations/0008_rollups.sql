-- Rollups of the aggregate views (issue #13): tool_stats, slow_hooks and repeated_calls
-- summarize the whole ledger, which on 1M calls took seconds. They now read these tables,
-- which hold the rows up to a mark (rollup_marks.last_id), and aggregate only the rows
-- after it from the tables themselves, so a view is exact whenever it is read, refreshed
-- or not. Nothing on the hot path writes them (no trigger, no index added): `rollup.py`
-- moves the marks forward off the hot path (a Ledger's close, `hookrails ledger`
-- commands, /v1/stats), a bounded number of rows at a time. A call still pending when the
-- mark passes it counts in tool_rollup as a call only, and its id goes to rollup_pending:
-- the views read its status from tool_calls once it has finished, until a refresh folds
-- it in. Anything that changes rows below a mark
-- (prune, a spool import, a copy into the file) empties the rollups, which the next
-- refresh builds again. Durations are kept per value rounded to 3 significant digits (the
-- percentiles' definition, docs/ledger.md), with the exact sum and maximum.
CREATE TABLE rollup_marks (
    name     TEXT PRIMARY KEY,            -- the table summarized: tool_calls, hook_run_sets
    last_id  INTEGER NOT NULL DEFAULT 0   -- its rows with id <= last_id are in the rollups
) WITHOUT ROWID;
INSERT INTO rollup_marks (name, last_id) VALUES ('tool_calls', 0), ('hook_run_sets', 0);
-- calls below the mark that were pending when it passed them (their rows still change)
CREATE TABLE rollup_pending (id INTEGER PRIMARY KEY);
-- tool_stats: calls per tool and status
CREATE TABLE tool_rollup (
    tool_name       TEXT PRIMARY KEY,
    calls           INTEGER NOT NULL,
    ok              INTEGER NOT NULL,
    denials         INTEGER NOT NULL,
    errors          INTEGER NOT NULL,
    interrupted     INTEGER NOT NULL,
    last_called_at  TEXT
) WITHOUT ROWID;
-- tool_stats: durations of the calls that ran, per tool and value (3 significant digits)
CREATE TABLE tool_duration_rollup (
    tool_name    TEXT NOT NULL,
    duration_ms  REAL NOT NULL,
    n            INTEGER NOT NULL,
    sum_ms       REAL NOT NULL,       -- the exact durations' sum
    PRIMARY KEY (tool_name, duration_ms)
) WITHOUT ROWID;
-- slow_hooks: runs and failures per hook and event
CREATE TABLE hook_rollup (
    hook      TEXT NOT NULL,
    event     TEXT NOT NULL,
    runs      INTEGER NOT NULL,
    failures  INTEGER NOT NULL,
    PRIMARY KEY (hook, event)
) WITHOUT ROWID;
-- slow_hooks: durations per hook, event and value (3 significant digits)
CREATE TABLE hook_duration_rollup (
    hook         TEXT NOT NULL,
    event        TEXT NOT NULL,
    duration_ms  REAL NOT NULL,
    n            INTEGER NOT NULL,
    sum_ms       REAL NOT NULL,       -- the exact durations' sum
    max_ms       REAL NOT NULL,       -- the exact longest
    PRIMARY KEY (hook, event, duration_ms)
) WITHOUT ROWID;
-- repeated_calls: the groups of 2 or more calls, as of the refresh that last touched them
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
-- /v1/stats' denials by hook: denied calls per first denying (or failing) hook run; a call is
-- denied when first recorded and stays so. '' stands for NULL (a denial without a hook run).
CREATE TABLE denial_rollup (
    hook          TEXT NOT NULL,
    matcher       TEXT NOT NULL,
    hook_outcome  TEXT NOT NULL,
    denials       INTEGER NOT NULL,
    last_at       TEXT,
    PRIMARY KEY (hook, matcher, hook_outcome)
) WITHOUT ROWID;
