-- Caller ID's lookup key (migration 029) becomes each agency's own: the
-- digest of one number differs from agency to agency, so that no
-- agency's digests can be matched against another's, and one agency's
-- key lost, rotated or erased (its row deleted: its contacts' digests
-- then find nothing) touches no other. The default agency keeps the key
-- the store had, so every digest made before reads as before. Another
-- agency's key is made, from Go's crypto/rand, by the first process that
-- seals a contact for it (store.lookupKey), in that agency's own
-- transaction: row-level security holds it to its agency like the data
-- keys beside it. A transaction that names no agency reads the default
-- agency's key, as the expand half of migration 037 reads its tables.

ALTER TABLE vault.lookup_key DROP CONSTRAINT lookup_key_pkey;
ALTER TABLE vault.lookup_key ADD COLUMN agency_no integer NOT NULL DEFAULT coalesce(current_agency(), 1) REFERENCES agency;
ALTER TABLE vault.lookup_key ADD PRIMARY KEY (agency_no);
ALTER TABLE vault.lookup_key ENABLE ROW LEVEL SECURITY;
ALTER TABLE vault.lookup_key FORCE ROW LEVEL SECURITY;
CREATE POLICY agency ON vault.lookup_key USING (agency_no = coalesce((SELECT current_agency()), 1))
    WITH CHECK (agency_no = coalesce((SELECT current_agency()), 1));

-- The API seals contacts, so it may make its agency's key: migration 040
-- grants it (with the platform secrets, in one redefinition of the
-- roles' grants).
