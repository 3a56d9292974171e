-- What a ledger many machines share needs (the PostgreSQL store; the same tables here): the
-- tenant on each call and event (from its session's row, for queries per tenant without a
-- join), and the lease of an in-progress idempotency claim (a server store takes a claim
-- over when its lease ran out; this file's store asks whether the claim's process runs).

ALTER TABLE tool_calls ADD COLUMN tenant_id TEXT;
ALTER TABLE events ADD COLUMN tenant_id TEXT;
ALTER TABLE idempotency_keys ADD COLUMN lease_expires_at TEXT;
CREATE INDEX tool_calls_by_tenant ON tool_calls (tenant_id, started_at) WHERE tenant_id IS NOT NULL;
