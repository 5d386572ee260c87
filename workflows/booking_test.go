package workflows

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/visibility"

	"github.com/google/uuid"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/syncbuf"
	"github.com/bookingsaga/bookingsaga/receipt"
)

const key = "key-0001"

var slotStart = time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)

type fixture struct {
	t   *testing.T
	env *testsuite.TestWorkflowEnvironment
	a   *activities.Activities
	// logs holds what the saga logged at warn and above.
	logs *syncbuf.Buffer
	// holds is the store's last word per key, for the reads no mock of
	// the test answers (storeReads); the mirrors' first tries run side
	// by side, so it is locked.
	mu    sync.Mutex
	holds map[string]booking.Booking
}

func setup(t *testing.T) *fixture {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	logs := &syncbuf.Buffer{}
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.MultiWriter(os.Stderr, logs), &slog.HandlerOptions{Level: slog.LevelWarn}))))
	env := suite.NewTestWorkflowEnvironment()
	// Wall time, not workflow time: the default 3 s is too little for a
	// loaded CI machine under the race detector.
	env.SetTestTimeout(30 * time.Second)
	env.SetStartTime(slotStart.Add(-48 * time.Hour))
	f := &fixture{t: t, env: env, a: &activities.Activities{}, logs: logs, holds: map[string]booking.Booking{}}
	env.RegisterActivity(f.a)
	env.RegisterWorkflow(Booking)
	t.Cleanup(func() { env.AssertExpectations(t) })
	return f
}

func request(start time.Time) booking.CommitRequest {
	return booking.CommitRequest{ExpectedPolicyVersion: "p1", Intent: booking.Intent{PropertyID: "paris-11", AgentID: "agent-00",
		StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris"}}
}

func stored(k string, req booking.CommitRequest, status booking.Status) booking.Booking {
	now := slotStart.Add(-48 * time.Hour)
	return booking.Booking{BookingID: uuid.NewSHA1(uuid.Nil, []byte(k)), RequestKey: k, Status: status,
		Intent: req.Intent, PolicyVersion: "p1", CommittedAt: &now}
}

func forKey(k string) any {
	return mock.MatchedBy(func(in any) bool {
		switch v := in.(type) {
		case booking.CommitInput:
			return v.RequestKey == k
		case booking.KeyInput:
			return v.RequestKey == k
		case booking.ConfirmInput:
			return v.RequestKey == k
		case booking.ReleaseInput:
			return v.RequestKey == k
		}
		return false
	})
}

// mirrorsOK makes the calendar and CRM writes succeed for any key.
// commitConfirms has the store book req under k once.
func (f *fixture) commitConfirms(k string, req booking.CommitRequest) {
	b := stored(k, req, booking.StatusConfirmed)
	f.env.OnActivity(f.a.Commit, mock.Anything, forKey(k)).Return(booking.CommitOutput{Booking: b}, nil).Once()
	f.storeHolds(b)
}

// storeHolds has the store answer reads of b's key with b once the test's
// own mocks are spent: the saga reads its key again at the viewing's end
// (changeFinalRead), and a child saga its own.
func (f *fixture) storeHolds(b booking.Booking) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holds[b.RequestKey] = b
}

// held is the store's record of k, as storeHolds and the mirrors left it.
func (f *fixture) held(k string) (booking.Booking, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.holds[k]
	return b, ok
}

// mirrored records a mirror's reference on k's record, as the mirror
// activities do in the store.
func (f *fixture) mirrored(k string, out booking.SyncOutput) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b, ok := f.holds[k]; ok {
		b.ProviderEventID = cmp.Or(out.EventID, b.ProviderEventID)
		b.CRMRef = cmp.Or(out.CRMRef, b.CRMRef)
		f.holds[k] = b
	}
}

func (f *fixture) mirrorsOK() {
	for _, m := range []struct {
		act any
		out booking.SyncOutput
	}{{f.a.SyncCalendar, booking.SyncOutput{EventID: "bsevent"}}, {f.a.SyncCRM, booking.SyncOutput{CRMRef: "crm-1"}}} {
		f.env.OnActivity(m.act, mock.Anything, mock.Anything).Return(func(_ context.Context, in booking.KeyInput) (booking.SyncOutput, error) {
			f.mirrored(in.RequestKey, m.out)
			return m.out, nil
		}).Maybe()
	}
}

type updateResult struct {
	receipt  receipt.Receipt
	err      error
	rejected error
	done     bool
}

// update sends an update after delay and collects its outcome.
func (f *fixture) update(delay time.Duration, name string, arg any) *updateResult {
	res := &updateResult{}
	f.env.RegisterDelayedCallback(func() {
		f.env.UpdateWorkflow(name, "", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { res.rejected, res.done = err, true },
			OnAccept: func() {},
			OnComplete: func(v any, err error) {
				res.err, res.done = err, true
				if r, ok := v.(receipt.Receipt); ok {
					res.receipt = r
				}
			},
		}, arg)
	}, delay)
	return res
}

func (f *fixture) run(in BookingInput) receipt.Receipt {
	f.t.Helper()
	f.storeReads()
	f.failUnmocked()
	f.env.ExecuteWorkflow(Booking, in)
	require.True(f.t, f.env.IsWorkflowCompleted())
	require.NoError(f.t, f.env.GetWorkflowError())
	var r receipt.Receipt
	require.NoError(f.t, f.env.GetWorkflowResult(&r))
	return r
}

func (f *fixture) state() BookingState {
	f.t.Helper()
	v, err := f.env.QueryWorkflow(booking.QueryState)
	require.NoError(f.t, err)
	var st BookingState
	require.NoError(f.t, v.Get(&st))
	return st
}

func TestCommitConfirmsThenMirrorsAndClosesAfterTheViewing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	f.commitConfirms(key, req)
	f.mirrorsOK()
	u := f.update(time.Second, booking.UpdateCommit, req)

	final := f.run(BookingInput{RequestKey: key})
	require.True(t, u.done)
	require.NoError(t, u.err)
	require.Equal(t, receipt.StatusConfirmed, u.receipt.Status)
	require.Equal(t, "2026-12-08 10:00 (+01:00, Europe/Paris)", u.receipt.LocalStart)
	require.Equal(t, receipt.StatusConfirmed, final.Status)
	require.Equal(t, "bsevent", final.ProviderEventID)
	st := f.state()
	require.True(t, st.CalendarSynced)
	require.True(t, st.CRMSynced)
}

func TestCommitTimeoutGoesUnknownThenLookupFindsIt(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	// The attempt outlasts the 3 s the caller can wait, then its reply is lost.
	f.env.OnActivity(f.a.Commit, mock.Anything, forKey(key)).After(5*time.Second).Return(booking.CommitOutput{}, errors.New("connection reset")).Once()
	f.env.OnActivity(f.a.Lookup, mock.Anything, forKey(key)).Return(booking.LookupOutput{Found: true, Booking: stored(key, req, booking.StatusConfirmed)}, nil).Once()
	f.storeHolds(stored(key, req, booking.StatusConfirmed))
	f.mirrorsOK()
	var during BookingState
	f.env.RegisterDelayedCallback(func() { during = f.state() }, 8*time.Second)
	u := f.update(time.Second, booking.UpdateCommit, req)

	final := f.run(BookingInput{RequestKey: key})
	require.Equal(t, receipt.StatusPending, u.receipt.Status, "no confirmation while the outcome is unknown")
	require.Equal(t, receipt.Reference(key), u.receipt.Reference)
	require.Empty(t, u.receipt.BookingID)
	require.Equal(t, StateConfirmed, during.State, "looked up right after the failure")
	require.Equal(t, receipt.StatusConfirmed, final.Status)
}

func TestAbsentAfterUnknownRetriesWithTheSameKey(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	var inputs []booking.CommitInput
	f.env.OnActivity(f.a.Commit, mock.Anything, forKey(key)).Return(func(_ context.Context, in booking.CommitInput) (booking.CommitOutput, error) {
		inputs = append(inputs, in)
		if len(inputs) == 1 {
			return booking.CommitOutput{}, errors.New("timeout")
		}
		return booking.CommitOutput{Booking: stored(key, req, booking.StatusConfirmed)}, nil
	}).Times(2)
	f.env.OnActivity(f.a.Lookup, mock.Anything, forKey(key)).Return(booking.LookupOutput{Found: false}, nil).Once()
	f.storeHolds(stored(key, req, booking.StatusConfirmed)) // once the retry has committed
	f.mirrorsOK()
	f.update(time.Second, booking.UpdateCommit, req)

	final := f.run(BookingInput{RequestKey: key})
	require.Equal(t, receipt.StatusConfirmed, final.Status)
	require.Len(t, inputs, 2)
	require.Equal(t, []int{1, 2}, []int{inputs[0].Attempt, inputs[1].Attempt}, "the retry says it is one, so the store's record is read first")
	inputs[1].Attempt = inputs[0].Attempt
	require.Equal(t, inputs[0], inputs[1], "the retry sends the same key and intent")
	require.Equal(t, key, inputs[1].RequestKey)
}

func TestConflictAndReusedKeyAreAnsweredFromStatus(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	detail := booking.ConflictDetail{Source: "store", Busy: []booking.Busy{{ResourceID: "paris-11", Capacity: 1, From: slotStart, To: slotStart.Add(time.Hour)}}}
	f.env.OnActivity(f.a.Commit, mock.Anything, forKey(key)).
		Return(booking.CommitOutput{}, temporal.NewNonRetryableApplicationError("taken", booking.ErrTypeConflict, nil, detail)).Once()
	first := f.update(time.Second, booking.UpdateCommit, req)
	other := f.update(time.Second, booking.UpdateCommit, request(slotStart.Add(time.Hour)))

	final := f.run(BookingInput{RequestKey: key})
	require.Equal(t, receipt.StatusConflict, first.receipt.Status)
	require.Equal(t, "paris-11", first.receipt.Reason.Busy[0].ResourceID)
	require.False(t, first.receipt.Reason.Retryable)
	require.Equal(t, receipt.StatusRejected, other.receipt.Status)
	require.Equal(t, string(booking.CodeRequestKeyReused), other.receipt.Reason.Code)
	require.Equal(t, receipt.StatusConflict, final.Status, "the key still means its first intent")
}

func TestDuplicateUpdatesShareOneCommit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	f.env.OnActivity(f.a.Commit, mock.Anything, forKey(key)).After(time.Second).Return(booking.CommitOutput{Booking: stored(key, req, booking.StatusConfirmed)}, nil).Once()
	f.storeHolds(stored(key, req, booking.StatusConfirmed))
	f.mirrorsOK()
	var us []*updateResult
	for i := range 5 {
		us = append(us, f.update(time.Second+time.Duration(i)*time.Millisecond, booking.UpdateCommit, req))
	}
	f.run(BookingInput{RequestKey: key})
	for _, u := range us {
		require.True(t, u.done)
		require.Equal(t, us[0].receipt, u.receipt)
	}
	require.Equal(t, receipt.StatusConfirmed, us[0].receipt.Status)
}

func TestInvalidCommitIsRejectedBeforeHistory(t *testing.T) {
	t.Parallel()
	f := setup(t)
	bad := request(slotStart)
	bad.Intent.EndsAt = bad.Intent.StartsAt
	u := f.update(time.Second, booking.UpdateCommit, bad)
	// Before the intent lapses with no request, the store is asked whether
	// a commit the saga never saw booked the key.
	f.env.OnActivity(f.a.Lookup, mock.Anything, forKey(key)).Return(booking.LookupOutput{}, nil).Once()
	final := f.run(BookingInput{RequestKey: key})
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, u.rejected, &appErr)
	require.Equal(t, booking.ErrTypeRejected, appErr.Type())
	var rej booking.Rejection
	require.NoError(t, appErr.Details(&rej))
	require.Equal(t, booking.CodeInvalidTimeRange, rej.Code)
	require.Equal(t, receipt.StatusExpired, final.Status, "nothing was committed; the intent lapsed")
}

// published records what each search-attribute upsert set.
type published struct {
	Status         string
	CalendarSynced bool
}

func (f *fixture) recordPublished() *[]published {
	var got []published
	f.env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		status, _ := sa.GetKeyword(visibility.AttrStatus)
		synced, _ := sa.GetBool(visibility.AttrCalendarSynced)
		got = append(got, published{Status: status, CalendarSynced: synced})
	}).Return(nil)
	return &got
}

func TestDecisionReachesSearchAttributesWithTheMirrorsInOneWrite(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	f.commitConfirms(key, req)
	f.mirrorsOK()
	got := f.recordPublished()
	f.update(time.Second, booking.UpdateCommit, req)
	f.run(BookingInput{RequestKey: key})
	require.Equal(t, []published{{Status: string(StateConfirmed), CalendarSynced: true}}, *got)
}

func TestSlowMirrorsDoNotHideTheDecision(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	f.commitConfirms(key, req)
	// The first try outlasts MirrorFirstTry (the SDK times the local
	// activity out; the test suite does not time mocks, so it says so); the
	// retry is prompt.
	f.env.OnActivity(f.a.SyncCalendar, mock.Anything, mock.Anything).
		Return(booking.SyncOutput{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil)).Once()
	f.env.OnActivity(f.a.SyncCalendar, mock.Anything, mock.Anything).Return(booking.SyncOutput{EventID: "bsevent"}, nil).Once()
	f.env.OnActivity(f.a.SyncCRM, mock.Anything, mock.Anything).Return(booking.SyncOutput{CRMRef: "crm-1"}, nil).Once()
	got := f.recordPublished()
	f.update(time.Second, booking.UpdateCommit, req)
	f.run(BookingInput{RequestKey: key})
	require.Equal(t, []published{
		{Status: string(StateConfirmed), CalendarSynced: false}, // the first try timed out: published before the retry
		{Status: string(StateConfirmed), CalendarSynced: true},
	}, *got)
}

// A selected intent nobody commits lapses, and the lapse is recorded in the
// store as the key's decision, so the key keeps it after retention.
func TestALapsedIntentIsRecordedInTheStore(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	var asked booking.LapseInput
	f.env.OnActivity(f.a.Lapse, mock.Anything, mock.Anything).Return(func(_ context.Context, in booking.LapseInput) (booking.LookupOutput, error) {
		asked = in
		return booking.LookupOutput{Found: true, Refusal: &booking.Refusal{RequestKey: key, Outcome: booking.RefusedExpired,
			Code: booking.CodeIntentExpired, Message: "lapsed", Intent: req.Intent, PolicyVersion: "p1"}}, nil
	}).Once()
	u := f.update(time.Second, booking.UpdateSelect, req)
	final := f.run(BookingInput{RequestKey: key, Settings: Settings{IntentTTL: time.Minute}})
	require.Equal(t, receipt.StatusOffered, u.receipt.Status)
	require.Equal(t, booking.LapseInput{RequestKey: key, Intent: req.Intent, PolicyVersion: "p1"}, asked)
	require.Equal(t, receipt.StatusExpired, final.Status)
	require.Equal(t, string(booking.CodeIntentExpired), final.Reason.Code)
}

// TestAForgedReconcileSignalIsNotTheStoresWord: anyone who reaches
// Temporal can signal a saga. A stuck saga takes a reconcile signal as a
// nudge to read the store itself, never its payload as the store's answer.
func TestAForgedReconcileSignalIsNotTheStoresWord(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	detail := booking.ConflictDetail{Source: "store", Busy: []booking.Busy{{ResourceID: "paris-11", Capacity: 1, From: slotStart, To: slotStart.Add(time.Hour)}}}
	f.env.OnActivity(f.a.Commit, mock.Anything, forKey(key)).Return(booking.CommitOutput{}, errors.New("connection reset")).Once()
	f.env.OnActivity(f.a.Commit, mock.Anything, forKey(key)).
		Return(booking.CommitOutput{}, temporal.NewNonRetryableApplicationError("taken", booking.ErrTypeConflict, nil, detail)).Once()
	// The store is slow to answer the first lookup; the next says absent.
	f.env.OnActivity(f.a.Lookup, mock.Anything, forKey(key)).After(20*time.Second).Return(booking.LookupOutput{Found: false}, nil).Once()
	f.env.OnActivity(f.a.Lookup, mock.Anything, forKey(key)).Return(booking.LookupOutput{Found: false}, nil).Maybe()
	f.update(time.Second, booking.UpdateCommit, req)
	forged := booking.LookupOutput{Found: true, Booking: stored(key, req, booking.StatusConfirmed)}
	f.env.RegisterDelayedCallback(func() { f.env.SignalWorkflow(booking.SignalReconcile, forged) }, 3*time.Second)
	var during BookingState
	f.env.RegisterDelayedCallback(func() { during = f.state() }, 4*time.Second)

	final := f.run(BookingInput{RequestKey: key})
	require.NotEqual(t, StateConfirmed, during.State, "the signal's payload was taken as the store's answer")
	require.Equal(t, receipt.StatusConflict, final.Status, "the store's own answer")
}
