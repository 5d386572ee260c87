-- The texts cap per agency (store.ClaimText) counts an agency's texts of
-- the last hour on every claim: an index on the agency and the time, so
-- that the count reads that hour's rows, not the table.
CREATE INDEX caller_message_agency_created ON caller_message (agency_no, created_at);
