-- Bookings, refusals and the event log have retention periods of their own
-- (README, Privacy). Past a booking's, the row stays for the agency's
-- records (who visited what when, counted), anonymised: its request key --
-- the one link to a call at the voice platform -- becomes 'anon-' and a
-- random id, the same one in its events and drift flags, and its CRM
-- reference goes. A refusal past its retention is deleted: no record needs
-- it. An event past the log's retention, anonymised by then, is deleted.
ALTER TABLE booking ADD COLUMN anonymised_at timestamptz;

CREATE INDEX booking_retention ON booking (ends_at) WHERE anonymised_at IS NULL;
CREATE INDEX booking_refusal_retention ON booking_refusal (decided_at);
CREATE INDEX booking_event_retention ON booking_event (occurred_at);

-- The log stays append-only but for the two steps of its retention: an
-- anonymisation that replaces the request key and touches nothing else,
-- and the deletion of a row anonymised already.
CREATE OR REPLACE FUNCTION booking_event_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.request_key LIKE 'anon-%' AND OLD.request_key NOT LIKE 'anon-%'
       AND NEW.event_id = OLD.event_id AND NEW.booking_id IS NOT DISTINCT FROM OLD.booking_id
       AND NEW.kind = OLD.kind AND NEW.detail = OLD.detail AND NEW.occurred_at = OLD.occurred_at THEN
        RETURN NEW;
    END IF;
    IF TG_OP = 'DELETE' AND OLD.request_key LIKE 'anon-%' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'booking_event is append-only';
END;
$$;
