-- Rollups of the aggregate views: SQLite's (sql/migrations/0008_rollups.sql) only. A
-- PostgreSQL server aggregates the tables in parallel workers, and its views read them
-- directly with the same definitions (percentiles over durations rounded to 3 significant
-- digits); this migration keeps the numbering shared and records that choice.
COMMENT ON TABLE tool_calls IS 'one row per tool call (docs/ledger.md); no rollups on PostgreSQL';
