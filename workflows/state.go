package workflows

import (
	"time"

	"github.com/bookingsaga/bookingsaga/internal/visibility"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// setState is the only place the saga's state changes. It refuses a move
// the transition table (doc.go) does not allow, unless the saga is
// adopting the store's record, which may move a decided saga anywhere the
// store says: the store decides, and the saga follows.
func (s *saga) setState(ctx workflow.Context, st State) bool {
	if s.st.State == st {
		return true
	}
	if !s.adopting && !canMove(s.st.State, st) {
		s.log.Error("illegal booking state change refused", "request_key", s.st.RequestKey, "from", s.st.State, "to", st)
		return false
	}
	s.log.Info("booking state", "request_key", s.st.RequestKey, "from", s.st.State, "to", st)
	s.st.State = st
	s.changes++ // the main loop publishes the search attributes
	if st.decided() && s.st.Request != nil {
		// Contact details went to the store with the commit; the saga
		// does not keep them once no retry can need them.
		s.st.Request.Contact = nil
	}
	return true
}

// publish keeps the search attributes in step, so the Temporal UI can list
// e.g. everything UNKNOWN, or not synced to the calendar. A commit under
// way is not published: within CommitWait it is decided or UNKNOWN, and
// writing COMMITTING first would cost every booking a visibility write
// for a state that usually lasts milliseconds.
func (s *saga) publish(ctx workflow.Context) {
	if s.st.State == StateCommitting {
		return
	}
	s.published = s.changes
	updates := []temporal.SearchAttributeUpdate{
		visibility.AttrStatus.ValueSet(string(s.st.State)),
		visibility.AttrReference.ValueSet(receipt.Reference(s.st.RequestKey)),
		visibility.AttrCalendarSynced.ValueSet(s.st.CalendarSynced),
		visibility.AttrCRMSynced.ValueSet(s.st.CRMSynced),
	}
	if s.messages && s.st.Messaged != "" {
		updates = append(updates, visibility.AttrCallerNotified.ValueSet(s.st.Messaged == booking.MessageSent))
	}
	if in := s.intent(); in != nil {
		updates = append(updates, visibility.AttrProperty.ValueSet(in.PropertyID), visibility.AttrAgent.ValueSet(in.AgentID),
			visibility.AttrSlotStart.ValueSet(in.StartsAt))
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		s.log.Warn("search attributes not updated", "error", err)
	}
}

func (s *saga) intent() *booking.Intent {
	if s.st.Booking != nil {
		return &s.st.Booking.Intent
	}
	if s.st.Request != nil {
		return &s.st.Request.Intent
	}
	return nil
}

// awaitUntil waits until cond holds or d has passed, and reports whether
// cond holds. Its timer is cancelled as soon as cond holds: when that
// happens within the same workflow task (a commit decided inside the task
// that received it) no timer reaches history at all, and no stray timer
// fires a workflow task later.
func awaitUntil(ctx workflow.Context, d time.Duration, summary string, cond func() bool) (bool, error) {
	if cond() {
		return true, nil
	}
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	timer := workflow.NewTimerWithOptions(tctx, d, workflow.TimerOptions{Summary: summary})
	if err := workflow.Await(ctx, func() bool { return cond() || timer.IsReady() }); err != nil {
		return false, err
	}
	return cond(), nil
}
