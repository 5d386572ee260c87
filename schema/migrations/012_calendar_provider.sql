-- Whose calendar a resource's calendar_id names: a Google calendar id, or
-- a Microsoft 365 user's or room's mailbox (booking.Resource.Provider).
-- Every calendar until now was Google's; a resource without a calendar
-- has no provider.
ALTER TABLE resource ADD COLUMN calendar_provider text CHECK (calendar_provider IN ('google', 'microsoft'));
UPDATE resource SET calendar_provider = 'google' WHERE calendar_id IS NOT NULL;
ALTER TABLE resource ADD CONSTRAINT resource_calendar_has_provider
    CHECK ((calendar_id IS NULL) = (calendar_provider IS NULL));
