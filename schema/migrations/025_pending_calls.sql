-- A booking call the API answered pending_reconciliation is kept, as it
-- was sent, until reconciliation sees it decided. When Temporal dies with
-- the call in flight it may never have got it: no saga and no store row
-- would then ever decide what the caller was told would be decided.
-- Reconciliation sends such a call again with its key (booking.PendingCall).
-- The request's contact is sealed under the key's data key, so an erasure
-- shreds it with the rest; retention deletes a call never settled when a
-- contact would be.
CREATE TABLE pending_call (
    request_key text NOT NULL,
    op          text NOT NULL CHECK (op IN ('commit', 'hold', 'reschedule', 'cancel')),
    call        jsonb NOT NULL,
    answered_at timestamptz NOT NULL,
    PRIMARY KEY (request_key, op)
);
CREATE INDEX pending_call_answered ON pending_call (answered_at);

-- The API notes a pending answer through this function, as it does the
-- booking.settled mark that goes with it: its role writes no booking
-- table. The first answer's call is the one kept; the key makes every
-- later one the same call.
CREATE FUNCTION note_pending_call(key text, op text, call jsonb, answered_at timestamptz) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT webhook_mark_pending(key);
    INSERT INTO pending_call (request_key, op, call, answered_at) VALUES (key, op, call, answered_at)
    ON CONFLICT DO NOTHING;
$$;
