-- Occupancy rows lose their two foreign keys. The guarantees those keys gave
-- are kept where they can still be broken.
--
-- Why: a foreign key checks every inserted row with its own query. That
-- query runs once per occupancy row for the booking and once for the
-- resource. A commit of a property and an agent paid four such queries.
-- Together they cost about a sixth of a commit (BENCHMARKS.md).
--
-- What the keys guaranteed, and what guarantees it now:
--  * The booking exists. The store writes occupancy only in the booking's
--    own statement or transaction, from the booking's own row. Deleting or
--    truncating bookings still removes their occupancy (the cascade, now
--    triggers).
--  * The resource exists and its number matches its id. The store takes
--    both from the resource rows it has locked. And a resource is never
--    deleted, renamed or renumbered (the trigger below): bookings, their
--    events and the calendars name it. This is stricter than the keys'
--    NO ACTION, and needs no look at occupancy, so it holds under any
--    isolation level (a check by query would miss, under REPEATABLE READ,
--    occupancy committed after the deleting transaction's snapshot).
-- What is lost: a writer that bypasses the store can now insert occupancy
-- for no booking, or under one resource's id with another's number. The
-- exclusion constraint, which compares numbers, still keeps it from
-- double-booking; such a row fails safe, refusing commits on its slot
-- (the store reports contention) while availability, which joins the
-- booking, shows the slot free.

ALTER TABLE booking_resource
    DROP CONSTRAINT booking_resource_booking_id_fkey,
    DROP CONSTRAINT booking_resource_resource_fkey;

CREATE FUNCTION resource_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND (NEW.resource_id, NEW.resource_no) IS NOT DISTINCT FROM (OLD.resource_id, OLD.resource_no) THEN
        RETURN NEW;
    END IF;
    RAISE foreign_key_violation USING
        MESSAGE = format('resource %s is kept: it can''t be deleted, renamed or renumbered', OLD.resource_id);
END;
$$;

CREATE TRIGGER resource_keep BEFORE DELETE OR UPDATE OF resource_id, resource_no ON resource
    FOR EACH ROW EXECUTE FUNCTION resource_keep();

CREATE FUNCTION booking_delete_occupancy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM booking_resource WHERE booking_id = OLD.booking_id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER booking_delete_occupancy AFTER DELETE ON booking
    FOR EACH ROW EXECUTE FUNCTION booking_delete_occupancy();

CREATE FUNCTION booking_truncate_occupancy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE booking_resource;
    RETURN NULL;
END;
$$;

CREATE TRIGGER booking_truncate_occupancy AFTER TRUNCATE ON booking
    FOR EACH STATEMENT EXECUTE FUNCTION booking_truncate_occupancy();
