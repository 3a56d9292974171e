-- 1 if the tool has a call with status 'ok' in the session, else 0 (e.g. deny deploy unless run_tests succeeded).
-- params: :session :tool
--
-- PostgreSQL's version of sql/queries/tool_succeeded.sql: GLOB is hookrails_glob().
SELECT (EXISTS (
    SELECT 1
    FROM tool_calls
    WHERE session_id = :session AND hookrails_glob(tool_name, :tool) AND status = 'ok'
))::integer AS succeeded;
