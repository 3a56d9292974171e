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
