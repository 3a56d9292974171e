-- The 20 slowest hooks by 95th percentile duration (from the slow_hooks view).
--
-- Columns: hook, event, runs, avg_ms, p95_ms, max_ms, failures (see slow_hooks).
SELECT hook, event, runs, avg_ms, p95_ms, max_ms, failures
FROM slow_hooks
ORDER BY p95_ms DESC NULLS LAST, hook, event
LIMIT 20;
