-- A caller's own page: the link in each of their texts and e-mails opens
-- it (api/callerpage). The link's token is derived from the data key
-- their contact is sealed under, so every message of the booking and of
-- its moves carries the same link, a try resent carries the one the
-- first try sent, and erasing the contact (which deletes the data key)
-- makes every link to it unmakeable; the store keeps only the token's
-- SHA-256. A link expires with its viewing's end and is revoked by the
-- agency's admin (the next message then carries the next generation's);
-- it goes with the contact's data key, and the rows of links expired a
-- week go with retention. (The logins' grants: migration 048.)
CREATE TABLE vault.caller_link (
    agency_no   integer NOT NULL DEFAULT coalesce(current_agency(), 1) REFERENCES agency,
    token_hash  bytea NOT NULL CHECK (length(token_hash) = 32),
    request_key text NOT NULL,
    generation  integer NOT NULL CHECK (generation >= 0),
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agency_no, token_hash),
    UNIQUE (agency_no, request_key, generation),
    FOREIGN KEY (agency_no, request_key) REFERENCES vault.contact_key (agency_no, request_key) ON DELETE CASCADE
);
ALTER TABLE vault.caller_link ENABLE ROW LEVEL SECURITY;
ALTER TABLE vault.caller_link FORCE ROW LEVEL SECURITY;
CREATE POLICY agency ON vault.caller_link USING (agency_no = coalesce((SELECT current_agency()), 1))
    WITH CHECK (agency_no = coalesce((SELECT current_agency()), 1));
CREATE INDEX caller_link_expiry ON vault.caller_link (expires_at);


-- A reply the service does not understand is answered once a day per
-- number (api/texts): when it last was, beside the contact's data key.
ALTER TABLE vault.contact_key ADD COLUMN texts_answered_at timestamptz;

-- The agency as its callers see it: the name their messages are signed
-- with and the number they call back, set by its admin (PUT /v1/profile).
CREATE TABLE agency_profile (
    agency_no      integer PRIMARY KEY DEFAULT coalesce(current_agency(), 1) REFERENCES agency,
    name           text NOT NULL CHECK (length(name) <= 240),
    callback_phone text NOT NULL CHECK (callback_phone = '' OR callback_phone ~ '^\+[1-9][0-9]{6,14}$'),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE agency_profile ENABLE ROW LEVEL SECURITY;
ALTER TABLE agency_profile FORCE ROW LEVEL SECURITY;
CREATE POLICY agency ON agency_profile USING (agency_no = coalesce((SELECT current_agency()), 1))
    WITH CHECK (agency_no = coalesce((SELECT current_agency()), 1));
