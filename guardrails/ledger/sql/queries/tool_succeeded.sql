-- 1 if the tool has a call with status 'ok' in the session, else 0 (e.g. deny deploy unless run_tests succeeded).
-- params: :session :tool
--
-- :session is the session_id; :tool is a tool_name or a GLOB pattern such as run_*
-- (case-sensitive), the same test as ctx.ledger.succeeded(tool, session_id) in a hook.
-- One row, one column: succeeded (1 or 0). Denied, pending, errored and interrupted calls
-- do not count.
SELECT EXISTS (
    SELECT 1
    FROM tool_calls
    WHERE session_id = :session AND tool_name GLOB :tool AND status = 'ok'
) AS succeeded;
