-- Which CRM a property's agency keeps (booking.Resource.CRM): NULL is the
-- deployment's default.
ALTER TABLE resource ADD COLUMN crm text CHECK (crm IN ('http', 'hubspot'));

-- The CRM contact of a caller who agreed to be kept on file: the id the
-- CRM (crm, by name; '' the default) gave it, a reference, not the
-- person, kept per request key so that a resent write, a reschedule's new
-- meeting and a merge by staff all find the same contact again, and so
-- that erasing the caller in the store reaches the CRM: once the key's
-- contact is erased (its vault tombstone), reconciliation asks the CRM to
-- delete the contact as its privacy API does, and marks the row
-- forgotten.
CREATE TABLE vault.crm_contact (
    request_key  text PRIMARY KEY,
    crm          text NOT NULL,
    contact_ref  text NOT NULL CHECK (contact_ref <> ''),
    linked_at    timestamptz NOT NULL,
    forgotten_at timestamptz
);
CREATE INDEX crm_contact_unforgotten ON vault.crm_contact (request_key) WHERE forgotten_at IS NULL;
