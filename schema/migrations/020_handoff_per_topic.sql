-- One open hand-off per conversation and topic: a new reason for the same
-- kind of question (a model rewording it, a caller adding a detail)
-- updates the open one instead of opening another and a delivery to every
-- webhook receiver. Open duplicates from before are settled first: the
-- newest of each stays open, the others are resolved as superseded.
UPDATE handoff h SET resolved_at = now(), note = 'superseded by a later request of the same conversation and topic'
WHERE resolved_at IS NULL AND EXISTS (
    SELECT 1 FROM handoff n
    WHERE n.resolved_at IS NULL AND n.conversation_id = h.conversation_id AND n.topic = h.topic
      AND (n.requested_at, n.handoff_id) > (h.requested_at, h.handoff_id));

DROP INDEX handoff_once;
CREATE UNIQUE INDEX handoff_open_once ON handoff (conversation_id, topic) WHERE resolved_at IS NULL;
