-- Which CRM contacts the service made (DH2). An erasure deletes only
-- those; a contact it found by the caller's e-mail, or phone and name, is
-- the agency's, and only loses the caller's meetings. A contact linked
-- before this migration can't be told apart: it is taken as found, so it
-- is unlinked, never deleted (docs/configuration.md says how to delete by
-- hand one the service made).
ALTER TABLE vault.crm_contact ADD COLUMN created boolean NOT NULL DEFAULT false;
