-- A reference is 40 bits of a hash of the key: among a million keys two
-- share one about as often as not, and a lookup by it could answer another
-- caller's booking. From here on no two bookings share one: a commit
-- refuses a key whose reference another request already holds
-- (reference_collision), and this index settles two such commits racing.
-- Anonymised bookings, whose reference went with their key, are left out.
-- Should two bookings already share a reference, this migration fails on
-- them by name; cancel or re-key one (ops) and run it again.
DROP INDEX booking_reference;
CREATE UNIQUE INDEX booking_reference ON booking (request_reference(request_key)) WHERE request_key NOT LIKE 'anon-%';
