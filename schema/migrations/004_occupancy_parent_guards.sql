-- Occupancy rows lose their two foreign keys. The guarantees those keys gave
-- are kept where they can still be broken.
--
-- Why: a foreign key checks every inserted row with its own query. That
-- query runs once per occupancy row for the booking and once for the
-- resource. A commit of a property and an agent paid four such queries.
-- Together they cost about a sixth of a commit (BENCHMARKS.md).
--
-- What the keys guaranteed, and what guarantees it now:
--  * The booking exists. The only writers are the store's commit
--    statements, and they insert the occupancy in the same statement or
--    transaction as the booking, from the booking's own row. Deleting a
--    booking still removes its occupancy (the cascade, now a trigger), so
--    no orphan can keep a slot busy.
--  * The resource exists and its number matches its id. The commit
--    statements take both from the resource rows they lock. A resource that
--    any occupancy names can't be deleted, renamed or renumbered (the
--    trigger below), as the key's NO ACTION refused before.
-- A writer that bypasses the store is still held by the exclusion
-- constraint, which compares resource numbers: it can't double-book, only
-- label a row wrongly.

ALTER TABLE booking_resource
    DROP CONSTRAINT booking_resource_booking_id_fkey,
    DROP CONSTRAINT booking_resource_resource_fkey;

CREATE FUNCTION resource_keep_referenced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND (NEW.resource_id, NEW.resource_no) IS NOT DISTINCT FROM (OLD.resource_id, OLD.resource_no) THEN
        RETURN NEW;
    END IF;
    IF EXISTS (SELECT 1 FROM booking_resource
               WHERE resource_no = OLD.resource_no OR resource_id = OLD.resource_id) THEN
        RAISE foreign_key_violation USING
            MESSAGE = format('resource %s is named by bookings: it can''t be deleted, renamed or renumbered', OLD.resource_id);
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END;
$$;

CREATE TRIGGER resource_keep_referenced BEFORE DELETE OR UPDATE OF resource_id, resource_no ON resource
    FOR EACH ROW EXECUTE FUNCTION resource_keep_referenced();

CREATE FUNCTION booking_delete_occupancy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM booking_resource WHERE booking_id = OLD.booking_id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER booking_delete_occupancy AFTER DELETE ON booking
    FOR EACH ROW EXECUTE FUNCTION booking_delete_occupancy();
