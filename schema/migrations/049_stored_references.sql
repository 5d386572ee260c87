-- A request's reference (request_reference, migration 005) is stored with
-- its key. Under the agencies' row-level security (037) a qual calling a
-- function on a column is not leakproof, so PostgreSQL may not use it in
-- an index scan ahead of the policy: the indexes on request_reference(
-- request_key) were searched by agency alone, and every commit's
-- reference check hashed every booking and refusal of its agency, as did
-- every lookup by reference. A stored column is compared by index, in
-- the agency's. The columns follow the key: anonymisation rewrites the
-- key, and its reference with it. (Adding them rewrites the three
-- tables once.)
ALTER TABLE booking ADD COLUMN reference bytea GENERATED ALWAYS AS (request_reference(request_key)) STORED;
ALTER TABLE booking_refusal ADD COLUMN reference bytea GENERATED ALWAYS AS (request_reference(request_key)) STORED;
ALTER TABLE pending_call ADD COLUMN reference bytea GENERATED ALWAYS AS (request_reference(request_key)) STORED;

CREATE UNIQUE INDEX booking_agency_stored_reference ON booking (agency_no, reference) WHERE request_key NOT LIKE 'anon-%';
DROP INDEX booking_agency_reference;
CREATE INDEX booking_refusal_agency_reference ON booking_refusal (agency_no, reference);
DROP INDEX booking_refusal_reference;
CREATE INDEX pending_call_agency_reference ON pending_call (agency_no, reference);
DROP INDEX pending_call_reference;
