-- The contract half of migrations/037_agencies.sql, once no worker of the
-- build before it runs: the global keys go, so two agencies may each use
-- a request_key, a reference, a resource id, a policy version, a webhook
-- endpoint or a pool name; and a transaction that names no agency sees
-- and writes nothing.

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY agency_tables() LOOP
        EXECUTE format('ALTER TABLE %s ALTER COLUMN agency_no SET DEFAULT current_agency()', t);
        EXECUTE format('ALTER POLICY agency ON %s USING (agency_no = (SELECT current_agency())) '
            'WITH CHECK (agency_no = (SELECT current_agency()))', t);
    END LOOP;
END;
$$;

ALTER TABLE booking DROP CONSTRAINT booking_property_id_fkey, DROP CONSTRAINT booking_agent_id_fkey,
    DROP CONSTRAINT booking_policy_version_fkey, DROP CONSTRAINT booking_request_key_key;
ALTER TABLE resource DROP CONSTRAINT resource_pkey, ADD CONSTRAINT resource_pkey PRIMARY KEY USING INDEX resource_agency_key;
ALTER TABLE policy DROP CONSTRAINT policy_pkey, ADD CONSTRAINT policy_pkey PRIMARY KEY USING INDEX policy_agency_key;
DROP INDEX policy_one_current;
DROP INDEX booking_reference;
ALTER TABLE drift_flag DROP CONSTRAINT drift_flag_request_key_kind_calendar_id_event_id_key;
ALTER TABLE booking_refusal DROP CONSTRAINT booking_refusal_pkey,
    ADD CONSTRAINT booking_refusal_pkey PRIMARY KEY USING INDEX booking_refusal_agency_key;

ALTER TABLE webhook_delivery DROP CONSTRAINT webhook_delivery_endpoint_id_fkey;
ALTER TABLE vault.webhook_key DROP CONSTRAINT webhook_key_endpoint_id_fkey;
ALTER TABLE webhook_endpoint DROP CONSTRAINT webhook_endpoint_pkey,
    ADD CONSTRAINT webhook_endpoint_pkey PRIMARY KEY USING INDEX webhook_endpoint_agency_key;
ALTER TABLE webhook_delivery ADD CONSTRAINT webhook_delivery_endpoint_fkey
    FOREIGN KEY (agency_no, endpoint_id) REFERENCES webhook_endpoint (agency_no, endpoint_id) ON DELETE CASCADE;
ALTER TABLE vault.webhook_key DROP CONSTRAINT webhook_key_pkey,
    ADD CONSTRAINT webhook_key_pkey PRIMARY KEY USING INDEX webhook_key_agency_key,
    ADD CONSTRAINT webhook_key_endpoint_fkey
    FOREIGN KEY (agency_no, endpoint_id) REFERENCES webhook_endpoint (agency_no, endpoint_id) ON DELETE CASCADE;
ALTER TABLE webhook_pending DROP CONSTRAINT webhook_pending_pkey,
    ADD CONSTRAINT webhook_pending_pkey PRIMARY KEY USING INDEX webhook_pending_agency_key;
ALTER TABLE agent_pool DROP CONSTRAINT agent_pool_pkey,
    ADD CONSTRAINT agent_pool_pkey PRIMARY KEY USING INDEX agent_pool_agency_key;
DROP INDEX handoff_open_once;
ALTER TABLE find_attempt DROP CONSTRAINT find_attempt_pkey,
    ADD CONSTRAINT find_attempt_pkey PRIMARY KEY USING INDEX find_attempt_agency_key;
ALTER TABLE pending_call DROP CONSTRAINT pending_call_pkey,
    ADD CONSTRAINT pending_call_pkey PRIMARY KEY USING INDEX pending_call_agency_key;
DROP INDEX caller_message_once;
ALTER TABLE reconcile_failure DROP CONSTRAINT reconcile_failure_pkey,
    ADD CONSTRAINT reconcile_failure_pkey PRIMARY KEY USING INDEX reconcile_failure_agency_key;
ALTER TABLE vault.contact_key DROP CONSTRAINT contact_key_pkey,
    ADD CONSTRAINT contact_key_pkey PRIMARY KEY USING INDEX contact_key_agency_key;
ALTER TABLE vault.crm_contact DROP CONSTRAINT crm_contact_pkey,
    ADD CONSTRAINT crm_contact_pkey PRIMARY KEY USING INDEX crm_contact_agency_key;
