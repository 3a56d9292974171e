-- Facts hooks attach to a call, as sql/migrations/0003_call_annotations.sql.

ALTER TABLE tool_calls ADD COLUMN annotations json;
