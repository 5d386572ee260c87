-- A caller message's last error is a provider's answer, which may quote
-- the caller's number or address (a Twilio look-up's URL carries To=):
-- the store keeps it scrubbed (booking.Scrub), here for the rows kept
-- before, and erasing the caller's contact, on request or at retention,
-- erases it too.
UPDATE caller_message SET last_error = regexp_replace(regexp_replace(last_error,
    '[^\s@<>"''(),;:&=?/]+(@|%40)[^\s@<>"''(),;:&=?/]+', '[email]', 'g'),
    '(\+|%2B)[0-9\s().-]{6,}[0-9]', '[phone]', 'g')
WHERE last_error IS NOT NULL;

CREATE FUNCTION caller_message_forget_errors() RETURNS trigger LANGUAGE plpgsql
SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    UPDATE caller_message SET last_error = NULL WHERE request_key = NEW.request_key AND last_error IS NOT NULL;
    RETURN NULL;
END;
$$;

CREATE TRIGGER caller_message_forget_errors AFTER INSERT OR UPDATE OF data_key ON vault.contact_key
    FOR EACH ROW WHEN (NEW.data_key IS NULL) EXECUTE FUNCTION caller_message_forget_errors();
