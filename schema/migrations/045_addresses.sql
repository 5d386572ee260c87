-- Where a viewing is: a property's address or meeting point, as the
-- caller's texts, e-mails and calendar invitation (LOCATION) give it, in
-- the agency's words and, like display names, in other languages.
ALTER TABLE resource ADD COLUMN address text CHECK (address IS NULL OR length(address) BETWEEN 1 AND 300);
ALTER TABLE resource ADD COLUMN addresses jsonb CHECK (addresses IS NULL OR jsonb_typeof(addresses) = 'object');
