package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"
)

// Changes to the saga's decisions since the first release, each behind
// workflow.GetVersion so that sagas an earlier build started (they stay
// open for weeks) replay as they ran. The kept histories in testdata/<build>
// hold every build to that (TestReplayKeptHistories); each change since
// v0.2.0 has histories recorded by the build before it, in
// testdata/before-<change id>. A change's branch for
// workflow.DefaultVersion may go only once no saga older than the change
// can still be open, and no kept history needs it.
const (
	// changeFinalRead (v0.2.0): at the viewing's end the saga reads its
	// record in the store before it closes, so its last answer, which the
	// receipt query gives until retention, is the store's.
	changeFinalRead = "final-store-read"
	// changeRetention (v0.2.0): a reconciliation run also applies the
	// retention of bookings, refusals and the event log, after that of
	// contacts.
	changeRetention = "booking-retention"
	// changeUserMetadata (v0.2.0): the saga keeps current details for the
	// Temporal UI, names its activities and timers, and gives a
	// reschedule's new saga a summary.
	changeUserMetadata = "user-metadata"
	// changeSignalIsNudge (v0.3.0): a stuck saga takes a reconcile signal
	// as a nudge to read the store itself, not its payload as the store's
	// answer: anyone who reaches Temporal can send one.
	changeSignalIsNudge = "reconcile-signal-is-a-nudge"
	// changeZoneRules (v0.4.0): a reconciliation run first moves future
	// bookings whose promised local time the zone rules in use map to
	// another instant (or flags them), so the mirrors it then repairs
	// follow in the same run.
	changeZoneRules = "follow-zone-rules"
	// changeCancelLost (v0.5.0): a cancel sends the booking the saga holds
	// with the release, so that a store that lost it records it cancelled
	// instead of the saga answering confirmed with nothing in the store.
	changeCancelLost = "cancel-a-lost-booking"
	// changeCallerMessages (v0.6.0): a confirmed saga sleeps until its
	// booking's reminder time and asks the store to queue the caller's
	// reminder, and takes the message sender's notices into its search
	// attributes (BookingCallerNotified) and summary.
	changeCallerMessages = "caller-messages"
	// changeUnchangedRecord (v0.7.0): a store record the saga already
	// holds is not mirrored again (the final read at the viewing's end
	// wrote every booking's calendar events and CRM record twice).
	changeUnchangedRecord = "unchanged-record-writes-no-mirror"
	// changeWakeWhenWorkEnds (v0.8.0): the main loop also wakes when a
	// commit runner or a reschedule ends, since its deadline waits for
	// them; a new booking whose signal to the one it replaces outlived
	// its last state change was left with no timer, not even the
	// viewing's end.
	changeWakeWhenWorkEnds = "wake-when-a-commit-or-move-ends"
	// changeStartInputFirst (v0.9.0): a saga started with a request to
	// commit (a move of a booking whose saga has closed, by update with
	// start) takes it before its update handlers, which the SDK runs as
	// soon as they are set: the update's own copy does not name the
	// booking it replaces, so the move was booked as a booking of its own.
	changeStartInputFirst = "start-input-before-updates"
	// changeCancelBeforeBooked (v0.10.0): a key its caller cancelled while
	// its booking call was pending and undecided is refused by the store
	// as cancelled_before_booked, which the saga answers cancelled, not
	// rejected: the caller asked for exactly that.
	changeCancelBeforeBooked = "cancel-before-booked"
	// changeStepsStandAlone (v0.10.0): each step of a reconciliation run
	// stands on its own: one that fails after its retries is reported
	// (the run's report, ops attention through NoteReconcile, a metric)
	// and the others run, instead of failing the run.
	changeStepsStandAlone = "reconcile-steps-stand-alone"
	// changeReadLostCommit (v0.12.0): an offered saga with no request (the
	// agent's update with start whose update a Temporal server lost while
	// its commit reached the store) reads the store when nudged and before
	// its intent lapses, and adopts a booking the store holds, instead of
	// answering offered, then expired, over it.
	changeReadLostCommit = "offered-saga-reads-a-lost-commit"
	// changeAgencyIDs (v0.13.0): a workflow acting for an agency other
	// than the default one starts its children (a reschedule's new
	// booking, an outcome's CRM mirror) and signals the booking it
	// replaces under that agency's workflow ids (agency.WorkflowID), with
	// its AgencyId search attribute, so that a request key is unique per
	// agency. The default agency's ids are unchanged.
	changeAgencyIDs = "agency-workflow-ids"
	// changeReconcilePerAgency (v0.13.0): the default agency's run starts
	// one run for each other agency, in that agency, as a child it does
	// not wait for: the store shows a run only its agency's rows, and one
	// agency's failing step or mirror holds back no other's.
	changeReconcilePerAgency = "reconcile-per-agency"
	// changeOneMarker (v0.14.0): a booking saga records this one version
	// marker when it starts and takes every change above that a saga asks
	// (oneMarkerStandsFor) without a marker of its own. A marker is two history
	// events, since the SDK upserts TemporalChangeVersion with each, and
	// every booking recorded three to five: a third of a booking's events.
	// A saga without it, started by an earlier build, asks each change as
	// before.
	changeOneMarker = "one-version-marker"
)

// oneMarkerStandsFor is every change changeOneMarker stands for: those a
// booking saga asked before it. A change made after it is not among them,
// since sagas that recorded the marker started without that change.
var oneMarkerStandsFor = []string{changeUserMetadata, changeCallerMessages, changeWakeWhenWorkEnds,
	changeStartInputFirst, changeFinalRead, changeCancelLost, changeCancelBeforeBooked, changeUnchangedRecord,
	changeSignalIsNudge, changeReadLostCommit, changeAgencyIDs}

// since reports whether the saga takes change: at once if its one marker
// stands for it, else as the change's own marker says.
func (s *saga) since(ctx workflow.Context, change string) bool {
	if s.oneMarker && slices.Contains(oneMarkerStandsFor, change) {
		return true
	}
	return workflow.GetVersion(ctx, change, workflow.DefaultVersion, 1) == 1
}
