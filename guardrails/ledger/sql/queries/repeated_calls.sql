-- Tool calls repeated with identical arguments in one session, most repeated first.
--
-- Columns: session_id, tool_name, arguments_hash, times, first_at, last_at, statuses,
-- example_arguments (see the repeated_calls view). Ties: most recent last_at first.
SELECT
    session_id,
    tool_name,
    arguments_hash,
    times,
    first_at,
    last_at,
    statuses,
    example_arguments
FROM repeated_calls
ORDER BY times DESC, last_at DESC, session_id, tool_name, arguments_hash;
