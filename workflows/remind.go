package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
)

// reminderDue reports whether the saga still has its caller's reminder to
// ask for: its booking has a reminder time (the store's, by the policy it
// was confirmed under), and the viewing has not begun. A reminder whose
// time passed while the worker was down still goes, late.
func (s *saga) reminderDue(now time.Time) bool {
	b := s.st.Booking
	return s.messages && !s.st.Reminded && b != nil && b.RemindAt != nil && now.Before(b.Intent.StartsAt)
}

// remind asks the store to queue the caller's reminder. The store queues
// it only while it holds the booking confirmed, so a cancel or move that
// raced the timer sends none; the sender then words and sends it.
func (s *saga) remind(ctx workflow.Context) {
	var out booking.ReminderOutput
	in := booking.ReminderInput{RequestKey: s.st.RequestKey, BookingID: s.st.Booking.BookingID}
	if err := s.activity(storeCtx(ctx), booking.ActivityQueueReminder, in).Get(ctx, &out); err != nil {
		return // only when the workflow is cancelled: storeCtx retries
	}
	s.st.Reminded = true
	s.changes++
	if !out.Queued {
		s.log.Info("no reminder queued: the store no longer holds the booking confirmed", "request_key", s.st.RequestKey)
	}
}

// messaged takes the sender's word on how a message to the caller ended.
func (s *saga) messaged(n booking.MessageNotice) {
	switch n.Status {
	case booking.MessageSent, booking.MessageUndeliverable:
		s.st.Messaged = n.Status
		s.changes++
	}
}
