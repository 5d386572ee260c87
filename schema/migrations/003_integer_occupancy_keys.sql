-- The exclusion constraint compares resources inside a GiST index, where
-- btree_gist's text keys (lower and upper bounds stored as varlena, detoasted
-- and compared on every descent) cost about as much as the rest of a commit's
-- occupancy write. Integer keys there cut a commit's cost by about a fifth
-- (BENCHMARKS.md). So each resource gets a small integer, and its occupancy
-- rows carry it beside the readable id; a composite foreign key keeps the
-- two in step, so no writer can put a row under one resource's id and
-- another's number.
--
-- The exclusion index is rebuilt under an exclusive lock on
-- booking_resource, so commits wait while it builds, for a time that grows
-- with the occupancy rows. Run it when bookings are quiet.

ALTER TABLE resource ADD COLUMN resource_no integer GENERATED ALWAYS AS IDENTITY;
ALTER TABLE resource ADD CONSTRAINT resource_resource_no_key UNIQUE (resource_no);
ALTER TABLE resource ADD CONSTRAINT resource_id_no_key UNIQUE (resource_id, resource_no);

ALTER TABLE booking_resource ADD COLUMN resource_no integer;
UPDATE booking_resource br SET resource_no = r.resource_no FROM resource r WHERE r.resource_id = br.resource_id;

ALTER TABLE booking_resource
    ALTER COLUMN resource_no SET NOT NULL,
    DROP CONSTRAINT booking_resource_resource_id_fkey,
    ADD CONSTRAINT booking_resource_resource_fkey
        FOREIGN KEY (resource_id, resource_no) REFERENCES resource (resource_id, resource_no),
    DROP CONSTRAINT booking_resource_no_overlap,
    ADD CONSTRAINT booking_resource_no_overlap
        EXCLUDE USING gist (resource_no WITH =, occupied WITH &&) WHERE (live AND exclusive);

-- Workers of the release before this one insert occupancy rows without
-- the number, and keep running while a rolling deploy replaces them; their
-- rows get it from their resource. Rows that carry it never call the
-- function (the WHEN is checked first). Drop this once no such worker runs.
CREATE FUNCTION booking_resource_fill_no() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT resource_no INTO NEW.resource_no FROM resource WHERE resource_id = NEW.resource_id;
    RETURN NEW;
END;
$$;

CREATE TRIGGER booking_resource_fill_no BEFORE INSERT ON booking_resource
    FOR EACH ROW WHEN (NEW.resource_no IS NULL) EXECUTE FUNCTION booking_resource_fill_no();

DROP INDEX booking_resource_live_shared;
CREATE INDEX booking_resource_live_shared ON booking_resource USING gist (resource_no, occupied)
    WHERE live AND NOT exclusive;

-- Same question as before, asked by resource number so both arms stay
-- index probes (the number is looked up once per call, by primary key).
CREATE OR REPLACE FUNCTION live_occupancy(p_resource text, p_range tstzrange)
RETURNS TABLE (booking_id uuid, occupied tstzrange)
LANGUAGE sql STABLE AS $$
    SELECT br.booking_id, br.occupied FROM resource r JOIN booking_resource br ON br.resource_no = r.resource_no
    WHERE r.resource_id = p_resource AND br.live AND br.exclusive AND br.occupied && p_range
    UNION ALL
    SELECT br.booking_id, br.occupied FROM resource r JOIN booking_resource br ON br.resource_no = r.resource_no
    WHERE r.resource_id = p_resource AND br.live AND NOT br.exclusive AND br.occupied && p_range
$$;

-- Events are only ever read per request key, in order; a primary key on
-- (request_key, event_id) serves that, so the separate index (one more
-- B-tree insert per change) goes.
ALTER TABLE booking_event DROP CONSTRAINT booking_event_pkey, ADD PRIMARY KEY (request_key, event_id);
DROP INDEX booking_event_request_key;
