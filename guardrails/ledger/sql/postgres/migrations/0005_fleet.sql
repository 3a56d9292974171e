-- A ledger many machines share (docs/ledger.md, PostgreSQL): the tenant on each call and
-- event (from its session's row, for queries per tenant without a join), and the lease
-- of an in-progress idempotency claim: a claim whose holder died is taken over once its
-- lease ran out, by one machine only (the row is locked while it is judged).

ALTER TABLE tool_calls ADD COLUMN tenant_id text;
ALTER TABLE events ADD COLUMN tenant_id text;
ALTER TABLE idempotency_keys ADD COLUMN lease_expires_at timestamptz;
CREATE INDEX tool_calls_by_tenant ON tool_calls (tenant_id, started_at) WHERE tenant_id IS NOT NULL;

-- `hookrails ledger tail --follow` listens on this channel: one notification per
-- transaction that wrote calls (they are delivered at commit, and coalesced).
CREATE FUNCTION hookrails_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('hookrails_ledger', TG_TABLE_NAME);
    RETURN NULL;
END;
$$;
CREATE TRIGGER tool_calls_notify AFTER INSERT OR UPDATE ON tool_calls
FOR EACH STATEMENT EXECUTE FUNCTION hookrails_notify();

-- SQLite's functions the docs' cookbook and users' queries use, so the same SQL runs on
-- both engines: json_extract (a '$.key.key' path; text), group_concat, sum() of a
-- comparison, round() of a double to some digits.
CREATE FUNCTION json_extract(doc json, path text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN doc #>> string_to_array(regexp_replace(path, '^\$\.?', ''), '.');
CREATE FUNCTION json_extract(doc text, path text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN json_extract(doc::json, path);
CREATE FUNCTION hookrails_concat(acc text, value text, sep text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN value IS NULL THEN acc WHEN acc IS NULL THEN value ELSE acc || sep || value END;
CREATE FUNCTION hookrails_concat(acc text, value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN hookrails_concat(acc, value, ',');
CREATE AGGREGATE group_concat(text, text) (SFUNC = hookrails_concat, STYPE = text);
CREATE AGGREGATE group_concat(text) (SFUNC = hookrails_concat, STYPE = text);
CREATE FUNCTION hookrails_sum_true(acc bigint, value boolean) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN acc + CASE WHEN value THEN 1 ELSE 0 END;
CREATE AGGREGATE sum(boolean) (SFUNC = hookrails_sum_true, STYPE = bigint, INITCOND = '0');
CREATE FUNCTION round(value double precision, digits integer) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN round(value::numeric, digits)::double precision;
