-- Webhook endpoints can be paused (deliveries wait, in order) and their
-- secrets rest sealed, as contacts do: each under a data key of its own in
-- the vault schema, which long-lived backups leave out. A secret written
-- before this release is plain until its endpoint's secret is rotated.
ALTER TABLE webhook_endpoint ADD COLUMN paused_at timestamptz;

CREATE TABLE vault.webhook_key (
    endpoint_id text PRIMARY KEY REFERENCES webhook_endpoint ON DELETE CASCADE,
    data_key    bytea NOT NULL CHECK (length(data_key) = 32)
);
