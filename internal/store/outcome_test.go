package store

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// An outcome goes on a viewing that has started, once: a resend changes
// nothing, a correction is an event of its own, and each event is a
// booking.outcome delivery that says whether a reminder went out.
func TestAnOutcomeIsRecordedOnceAViewingStarted(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, _, err := f.store.PutEndpoint(f.ctx, "crm", "https://receiver.example.test/hook")
	require.NoError(t, err)
	f.booked(t, "k-out", intent("paris", agent(1), "10:00", "10:30"))
	in := booking.OutcomeInput{RequestKey: "k-out", Outcome: booking.OutcomeNoShow, Note: "waited 20 minutes"}

	_, err = f.store.RecordOutcome(f.ctx, in)
	requireCode(t, err, booking.CodeOutcomeNotAllowed)

	f.clock.Advance(paris("10:05").Sub(testNow))
	out, err := f.store.RecordOutcome(f.ctx, in)
	require.NoError(t, err)
	require.True(t, out.Changed)
	require.False(t, out.Reminded, "no reminder was sent")
	require.Equal(t, booking.OutcomeNoShow, out.Booking.Outcome)
	again, err := f.store.RecordOutcome(f.ctx, in)
	require.NoError(t, err)
	require.False(t, again.Changed, "the same outcome again")

	in.Outcome = booking.OutcomeAttended
	fixed, err := f.store.RecordOutcome(f.ctx, in)
	require.NoError(t, err)
	require.True(t, fixed.Changed)
	b, err := f.store.Lookup(f.ctx, "k-out")
	require.NoError(t, err)
	require.Equal(t, booking.OutcomeAttended, b.Outcome)

	var events, deliveries int
	var last string
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT count(*) FROM booking_event WHERE request_key = 'k-out' AND kind = 'outcome'`).Scan(&events))
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT count(*), (array_agg(payload::text ORDER BY delivery_id DESC))[1]
FROM webhook_delivery WHERE event_type = 'booking.outcome'`).Scan(&deliveries, &last))
	require.Equal(t, 2, events, "the first and the correction")
	require.Equal(t, 2, deliveries)
	require.Contains(t, last, `"corrects": "no_show"`)
	require.Contains(t, last, `"reminded": false`)
}

// A reminder that went out is on the outcome; one still due is not.
func TestAnOutcomeSaysWhetherTheCallerWasReminded(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "k-rem", intent("paris", agent(1), "10:00", "10:30"))
	_, err := f.pool.Exec(f.ctx, `INSERT INTO caller_message (request_key, kind, event_id, status, sent_at) VALUES ('k-rem', 'reminder', 1, 'sent', $1)`, testNow)
	require.NoError(t, err)
	f.clock.Advance(paris("11:00").Sub(testNow))
	out, err := f.store.RecordOutcome(f.ctx, booking.OutcomeInput{RequestKey: "k-rem", Outcome: booking.OutcomeNoShow})
	require.NoError(t, err)
	require.True(t, out.Reminded)
}

// Which bookings take which outcome; a refused or malformed one writes
// nothing.
func TestOutcomesAreRefusedWhereTheyCantApply(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "k-moved", intent("paris", agent(1), "10:00", "10:30"))
	f.booked(t, "k-new", moving("k-moved", intent("paris", agent(1), "11:00", "11:30")))
	f.booked(t, "k-off", intent("paris", agent(2), "14:00", "14:30"))
	_, err := f.store.Release(f.ctx, ReleaseRequest{RequestKey: "k-off"})
	require.NoError(t, err)
	f.booked(t, "k-late", intent("paris", agent(4), "18:00", "18:30"))
	f.held(t, "k-held", intent("duo", agent(3), "15:00", "15:30"))
	before := f.count(t)

	cases := []struct {
		in   booking.OutcomeInput
		code booking.Code
	}{
		{booking.OutcomeInput{RequestKey: "k-new", Outcome: "maybe"}, booking.CodeInvalidOutcome},
		{booking.OutcomeInput{RequestKey: "k-new"}, booking.CodeMissingField},
		{booking.OutcomeInput{RequestKey: "k-new", Outcome: booking.OutcomeAttended, Note: string(make([]rune, booking.MaxOutcomeNote+1))}, booking.CodeInvalidOutcome},
		{booking.OutcomeInput{RequestKey: "k-late", Outcome: booking.OutcomeCancelledByAgency}, booking.CodeOutcomeNotAllowed},
		{booking.OutcomeInput{RequestKey: "k-late", Outcome: booking.OutcomeAttended}, booking.CodeOutcomeNotAllowed},
		{booking.OutcomeInput{RequestKey: "k-moved", Outcome: booking.OutcomeAttended}, booking.CodeOutcomeNotAllowed},
		{booking.OutcomeInput{RequestKey: "k-off", Outcome: booking.OutcomeNoShow}, booking.CodeOutcomeNotAllowed},
		{booking.OutcomeInput{RequestKey: "k-held", Outcome: booking.OutcomeCancelledByAgency}, booking.CodeOutcomeNotAllowed},
	}
	f.clock.Advance(paris("16:00").Sub(testNow))
	for _, c := range cases {
		_, err := f.store.RecordOutcome(f.ctx, c.in)
		requireCode(t, err, c.code)
	}
	_, err = f.store.RecordOutcome(f.ctx, booking.OutcomeInput{RequestKey: "k-none", Outcome: booking.OutcomeAttended})
	require.ErrorIs(t, err, booking.ErrNotFound)
	require.Equal(t, before, f.count(t), "nothing written")

	out, err := f.store.RecordOutcome(f.ctx, booking.OutcomeInput{RequestKey: "k-off", Outcome: booking.OutcomeCancelledByAgency})
	require.NoError(t, err, "a cancelled booking takes cancelled_by_agency")
	require.True(t, out.Changed)
}
