package workflows

import (
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// saga is one booking workflow's in-memory state. Handlers and the commit
// runner are coroutines of one workflow thread, so plain fields are safe;
// the mutex only keeps cancel and reschedule from interleaving across
// their activity calls.
type saga struct {
	st  BookingState
	set Settings
	log log.Logger
	mu  workflow.Mutex

	commitRunning bool
	// attemptsDone counts finished commit attempts, successful or not.
	attemptsDone int
	// commitWanted is set once a commit update arrived: a hold that lands
	// afterwards is confirmed at once.
	commitWanted bool
	// inFlight counts reschedules whose new booking is not decided yet;
	// their keys and outcomes are in st.Replacements. signalled holds a
	// new booking's outcome from its signal until this booking has read
	// its own record in the store, so a reschedule is answered only once
	// both agree.
	inFlight  int
	signalled map[string]*receipt.Receipt
	// dirty asks the main loop to sync the calendar and CRM.
	dirty bool
	// nudged and reconciled carry a reconciliation run's lookup to the
	// commit runner; cancelLookup cuts the runner's own lookup short.
	nudged     bool
	reconciled booking.LookupOutput
	// nudgeOnly: this saga takes a reconcile signal as a nudge, never its
	// payload as the store's word (changeSignalIsNudge).
	nudgeOnly    bool
	cancelLookup workflow.CancelFunc
	// notifying counts signals to a replaced booking still in flight.
	notifying int
	// changes counts state changes, so the main loop re-reads its deadline.
	changes int
	// adopting is set while the saga takes the store's record as its own
	// state, which setState then allows from any state.
	adopting bool
	// published is the change count last written to the search
	// attributes: one upsert per workflow task, however many changes.
	published int
	done      bool
	// oneMarker is set when the saga recorded changeOneMarker, which
	// stands for every change before it.
	oneMarker bool
	// meta is set when the saga keeps user metadata for the Temporal UI
	// (changeUserMetadata).
	meta bool
	// messages is set when the saga reminds its caller and publishes how
	// their messages went (changeCallerMessages).
	messages bool
	// wakeOnWorkEnd is set when the main loop wakes as a commit runner or
	// a reschedule ends (changeWakeWhenWorkEnds).
	wakeOnWorkEnd bool
}

// Booking is the saga of one request_key: commit in the store, then mirror
// to the calendar and CRM; cancel and reschedule while it is open. It stays
// open until the viewing has ended; a closed saga still answers the
// receipt query until Temporal's retention removes it, and the store keeps
// the booking and its log for good.
func Booking(ctx workflow.Context, in BookingInput) (receipt.Receipt, error) {
	s := &saga{set: in.Settings.WithDefaults(), log: workflow.GetLogger(ctx), mu: workflow.NewMutex(ctx),
		oneMarker: workflow.GetVersion(ctx, changeOneMarker, workflow.DefaultVersion, 1) == 1}
	s.meta, s.messages, s.wakeOnWorkEnd = s.since(ctx, changeUserMetadata), s.since(ctx, changeCallerMessages),
		s.since(ctx, changeWakeWhenWorkEnds)
	s.st = BookingState{RequestKey: in.RequestKey, State: StateOffered, OpenedAt: workflow.GetInfo(ctx).WorkflowStartTime}
	if in.Carry != nil {
		s.st = *in.Carry
		// Only a decided booking has mirrors to bring in step.
		s.dirty = s.st.State.decided() && !s.synced()
	}
	keyErr := booking.ValidateKey(in.RequestKey)
	startWith := in.Commit != nil && keyErr == nil && s.st.State == StateOffered
	if startWith && s.since(ctx, changeStartInputFirst) {
		// Before register: an update that came with the start runs as
		// soon as its handler is set, and must find the request it joins.
		req := *in.Commit
		s.st.Request = &req
	}
	if err := s.register(ctx); err != nil {
		return receipt.Receipt{}, err
	}
	onSignal(ctx, booking.SignalReconcile, s.onReconcile)
	if s.messages {
		onSignal(ctx, booking.SignalCallerMessaged, func(_ workflow.Context, n booking.MessageNotice) { s.messaged(n) })
	}
	onSignal(ctx, booking.SignalReplacement, func(_ workflow.Context, r receipt.Receipt) { s.replacementDecided(r) })
	if keyErr != nil {
		s.refuse(ctx, StateRejected, rejectionReason(keyErr))
	} else if startWith && s.st.State == StateOffered {
		if s.st.Request == nil { // taken before register since changeStartInputFirst
			req := *in.Commit
			s.st.Request = &req
		}
		s.startCommit(ctx)
	} else if in.Carry != nil && (s.st.State == StateUnknown || s.st.State == StateCommitting) {
		s.startCommit(ctx) // continued as new while the outcome was unknown
	}
	for !s.done {
		if err := s.step(ctx); err != nil {
			return receipt.Receipt{}, err
		}
	}
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) && s.notifying == 0 }); err != nil {
		return receipt.Receipt{}, err
	}
	s.describe(ctx, "", time.Time{})
	return s.receipt(), nil
}

func (s *saga) register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, booking.QueryState, func() (BookingState, error) { return s.st, nil }); err != nil {
		return err
	}
	// The receipt query also answers a commit re-sent after the workflow
	// closed, so it applies the same-intent rule to the request it is given.
	if err := workflow.SetQueryHandler(ctx, booking.QueryReceipt, func(req *booking.CommitRequest) (receipt.Receipt, error) {
		if req != nil {
			if r, reused := s.sameIntent(*req); reused {
				return r, nil
			}
		}
		return s.receipt(), nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, booking.UpdateSelect, s.selectSlot,
		workflow.UpdateHandlerOptions{Validator: validateCommit}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, booking.UpdateCommit, s.commit,
		workflow.UpdateHandlerOptions{Validator: validateCommit}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, booking.UpdateCancel, s.cancel); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, booking.UpdateReschedule, s.reschedule,
		workflow.UpdateHandlerOptions{Validator: s.validateReschedule})
}

// step waits for work or for the current state's deadline, then does it.
func (s *saga) step(ctx workflow.Context) error {
	if s.st.State.decided() && s.st.State != StateConfirmed && !s.dirty && s.inFlight == 0 {
		s.done = true // nothing is booked any more, and the mirrors agree
		return nil
	}
	if s.published != s.changes {
		s.publish(ctx)
	}
	wait, onTimeout, what := s.deadline(ctx)
	s.describe(ctx, what, workflow.Now(ctx).Add(wait))
	// The deadline waits for a running commit and for reschedules in
	// flight, so their end is a reason to read it again: a runner can end
	// after its last state change (a new booking still signalling the one
	// it replaces).
	seen, running, moving := s.changes, s.commitRunning, s.inFlight
	wake := func() bool {
		return s.dirty || s.done || s.changes != seen || s.shouldContinueAsNew(ctx) ||
			s.st.CancelRequested && !s.commitRunning && s.st.State != StateUnknown && s.st.State != StateCommitting ||
			s.wakeOnWorkEnd && (s.commitRunning != running || s.inFlight != moving)
	}
	woke := true
	var err error
	if onTimeout == nil {
		// No deadline in this state (a commit under way): no timer either.
		err = workflow.Await(ctx, wake)
	} else {
		woke, err = awaitUntil(ctx, wait, s.named(what), wake)
	}
	if err != nil {
		return err
	}
	if !woke && onTimeout != nil {
		onTimeout(ctx)
	}
	s.cancelPending(ctx)
	if s.dirty {
		s.sync(ctx)
	}
	if s.published != s.changes {
		s.publish(ctx)
	}
	if s.shouldContinueAsNew(ctx) {
		// Hand over once no handler is mid-flight, so no update is lost.
		if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
			return err
		}
		carry := s.st
		return workflow.NewContinueAsNewError(ctx, Booking, BookingInput{RequestKey: s.st.RequestKey, Settings: s.set, Carry: &carry})
	}
	return nil
}

// deadline says how long the current state may last, what ends it, and
// what that is called (the timer's summary in the UI).
func (s *saga) deadline(ctx workflow.Context) (time.Duration, func(workflow.Context), string) {
	now := workflow.Now(ctx)
	switch {
	case s.st.State == StateOffered || s.st.State == StateSelected && !s.st.Held:
		end := s.st.OpenedAt.Add(s.set.IntentTTL)
		return max(end.Sub(now), time.Millisecond), s.expireIntent, "intent expires"
	case s.st.State == StateSelected && s.st.Held && !s.commitRunning && s.st.Booking.HoldExpiresAt != nil:
		// At least a second: if the store's clock is behind ours, the hold
		// is asked about again rather than in a tight loop.
		return max(s.st.Booking.HoldExpiresAt.Sub(now), time.Second), s.expireHold, "hold expires"
	case s.st.State == StateConfirmed && s.inFlight == 0 && !s.commitRunning && s.reminderDue(now):
		return max(s.st.Booking.RemindAt.Sub(now), time.Millisecond), s.remind, "the caller is reminded"
	case s.st.State == StateConfirmed && s.inFlight == 0 && !s.commitRunning:
		return max(s.st.Booking.Intent.EndsAt.Sub(now), time.Millisecond), s.viewingEnded, "viewing ends; the saga closes"
	}
	return 0, nil, ""
}

// viewingEnded closes the saga of a booking whose viewing is over, as the
// store has it: a change made there since the last reconciliation (an
// operator's cancel, say) is adopted first, and its mirrors synced.
func (s *saga) viewingEnded(ctx workflow.Context) {
	if s.since(ctx, changeFinalRead) {
		s.refresh(ctx)
		if s.st.State != StateConfirmed {
			return // the loop syncs the mirrors, then closes
		}
	}
	s.done = true
}

// shouldContinueAsNew waits for in-flight work; a cancel still waiting for
// an unknown outcome is carried over in the state instead.
func (s *saga) shouldContinueAsNew(ctx workflow.Context) bool {
	return workflow.GetInfo(ctx).GetContinueAsNewSuggested() && !s.commitRunning && s.inFlight == 0 &&
		!s.dirty && (!s.st.CancelRequested || !s.st.State.decided())
}

// expireIntent closes an intent nobody committed in time. The lapse is a
// decision on the key like any other, so the store records it: the same
// key sent again after Temporal has forgotten this saga meets it there.
func (s *saga) expireIntent(ctx workflow.Context) {
	if s.commitRunning || s.st.Held || s.st.State.decided() {
		return
	}
	if s.lostCommitRead(ctx) {
		return
	}
	if req := s.st.Request; req != nil {
		var out booking.LookupOutput
		in := booking.LapseInput{RequestKey: s.st.RequestKey, Intent: req.Intent, PolicyVersion: req.ExpectedPolicyVersion}
		if err := s.activity(storeCtx(ctx), booking.ActivityLapse, in).Get(ctx, &out); err != nil {
			return // only when the workflow is cancelled: storeCtx retries
		}
		if s.commitRunning || s.st.State.decided() {
			return // a commit arrived meanwhile; its answer is the one to keep
		}
		s.adopt(ctx, out)
		return
	}
	s.setState(ctx, StateExpired)
	s.done = true
}

// expireHold lets the store expire the hold; the store decides whether it
// was confirmed in time.
func (s *saga) expireHold(ctx workflow.Context) {
	var out booking.LookupOutput
	if err := s.activity(storeCtx(ctx), booking.ActivityExpireHold, s.key()).Get(ctx, &out); err != nil {
		return // only when the workflow is cancelled: storeCtx retries
	}
	// A confirm may have started meanwhile; its answer is the one to keep.
	if s.st.State == StateSelected && s.st.Held && !s.commitRunning {
		s.fromStore(ctx, out.Booking)
	}
}

// onSignal hands each signal of that name to handle, in the order they
// came, for as long as the saga runs.
func onSignal[T any](ctx workflow.Context, name string, handle func(workflow.Context, T)) {
	workflow.Go(ctx, func(ctx workflow.Context) {
		ch := workflow.GetSignalChannel(ctx, name)
		for {
			var v T
			ch.Receive(ctx, &v)
			handle(ctx, v)
		}
	})
}
