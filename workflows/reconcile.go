package workflows

import (
	"errors"
	"slices"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/agency/agencyheader"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/visibility"
)

// ReconcileInput bounds one run. Zero values take the defaults.
type ReconcileInput struct {
	// Window is how far ahead bookings and calendars are compared.
	Window time.Duration
	// BatchSize bounds each page of bookings; a full page continues as new.
	BatchSize int
	// StuckAfter is how long a saga may stay UNKNOWN before a run steps in.
	StuckAfter time.Duration
	// Continuation state across continue-as-new.
	From          time.Time
	CalendarAfter *booking.Cursor
	CRMAfter      *booking.Cursor
	Report        ReconcileReport
}

func (in ReconcileInput) withDefaults() ReconcileInput {
	if in.Window <= 0 {
		in.Window = 14 * 24 * time.Hour
	}
	if in.BatchSize <= 0 {
		in.BatchSize = 200
	}
	if in.StuckAfter <= 0 {
		in.StuckAfter = 5 * time.Minute
	}
	return in
}

// ReconcileReport is a run's result: counts per category, and details.
type ReconcileReport struct {
	Stuck          booking.StuckReport
	Calendar       booking.CalendarReport
	CRM            booking.CRMReport
	HoldsExpired   int
	ContactsPurged int
	ZoneRules      booking.ZoneRulesReport
	// Retired counts keys anonymised and events deleted by retention.
	Retired int
	Pages   int
	// Failed are the steps that failed after their retries: the others
	// ran, and the next run tries these again.
	Failed []booking.StepOutcome `json:",omitempty"`
}

// Changed is the number of repairs and new flags: zero on a second run
// over the same state.
func (r ReconcileReport) Changed() int {
	c := r.Calendar
	// Stuck.Drifted is left out: a saga told the store's answer publishes
	// it a little later, so a second run may tell it again, harmlessly.
	return r.Stuck.Found + r.Stuck.Absent + r.Stuck.Resent + r.Stuck.MessagesQueued + c.Missing + c.Moved + c.Orphans + c.Flagged +
		r.CRM.Missing + r.CRM.Mismatched + r.HoldsExpired + r.ContactsPurged + r.Retired + r.ZoneRules.Moved + r.ZoneRules.Flagged
}

// Reconcile repairs drift between the store and everything else, in
// bounded, idempotent steps: stuck commits, expired holds, calendar, CRM,
// retention. Large windows continue as new page by page. Each step stands
// on its own (changeStepsStandAlone): one that fails after its retries (a
// mirror's revoked token) is reported, in the run's report, ops attention
// and a metric, and the others run; the next run tries it again.
func Reconcile(ctx workflow.Context, in ReconcileInput) (ReconcileReport, error) {
	in = in.withDefaults()
	if in.From.IsZero() {
		in.From = workflow.Now(ctx)
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute, MaximumAttempts: 5,
			NonRetryableErrorTypes: []string{booking.ErrTypeMirrorRefused}},
	})
	rep := in.Report
	alone := workflow.GetVersion(ctx, changeStepsStandAlone, workflow.DefaultVersion, 1) == 1
	// step ends one step: a failure stops the run, unless steps stand
	// alone, when it is reported and the run goes on.
	step := func(name string, err error) error {
		if err == nil || !alone {
			return err
		}
		rep.Failed = append(rep.Failed, booking.StepOutcome{Step: name, Error: err.Error()})
		workflow.GetLogger(ctx).Warn("reconciliation step failed; the others run", "step", name, "error", err)
		return nil
	}
	first := in.CalendarAfter == nil && in.CRMAfter == nil
	if first && agencyheader.FromWorkflow(ctx).IsDefault() && alone &&
		workflow.GetVersion(ctx, changeReconcilePerAgency, workflow.DefaultVersion, 1) == 1 {
		if err := step(booking.ActivityAgencies, reconcileAgencies(ctx, in)); err != nil {
			return rep, err
		}
	}
	if first {
		if err := firstSteps(ctx, in, &rep, step); err != nil {
			return rep, err
		}
	}
	window := booking.WindowInput{From: in.From, To: in.From.Add(in.Window), Limit: in.BatchSize}
	calIn, crmIn := window, window
	if in.CalendarAfter != nil {
		calIn.After = *in.CalendarAfter
	}
	if in.CRMAfter != nil {
		crmIn.After = *in.CRMAfter
	}
	var cal booking.CalendarReport
	err := workflow.ExecuteActivity(ctx, booking.ActivityReconcileCalendar, calIn).Get(ctx, &cal)
	if err := step(booking.ActivityReconcileCalendar, err); err != nil {
		return rep, err
	}
	var crm booking.CRMReport
	err = workflow.ExecuteActivity(ctx, booking.ActivityReconcileCRM, crmIn).Get(ctx, &crm)
	if err := step(booking.ActivityReconcileCRM, err); err != nil {
		return rep, err
	}
	rep.Calendar = addCalendar(rep.Calendar, cal)
	rep.CRM = addCRM(rep.CRM, crm)
	rep.Pages++
	if cal.Next != nil || crm.Next != nil {
		next := in
		next.CalendarAfter, next.CRMAfter, next.Report = cal.Next, crm.Next, rep
		if next.CalendarAfter == nil {
			next.CalendarAfter = &booking.Cursor{StartsAt: window.To}
		}
		if next.CRMAfter == nil {
			next.CRMAfter = &booking.Cursor{StartsAt: window.To}
		}
		return rep, workflow.NewContinueAsNewError(ctx, Reconcile, next)
	}
	if alone {
		if err := noteSteps(ctx, rep.Failed); err != nil {
			return rep, err
		}
	}
	workflow.GetLogger(ctx).Info("reconciliation done", "changed", rep.Changed(),
		"stuck_found", rep.Stuck.Found, "stuck_absent", rep.Stuck.Absent,
		"calendar_missing", rep.Calendar.Missing, "calendar_moved", rep.Calendar.Moved,
		"calendar_orphans", rep.Calendar.Orphans, "calendar_flagged", rep.Calendar.Flagged,
		"crm_missing", rep.CRM.Missing, "crm_mismatched", rep.CRM.Mismatched,
		"holds_expired", rep.HoldsExpired, "zone_rules_moved", rep.ZoneRules.Moved, "zone_rules_flagged", rep.ZoneRules.Flagged, "contacts_purged", rep.ContactsPurged, "retired", rep.Retired, "pages", rep.Pages,
		"failed", rep.Calendar.Failed+rep.CRM.Failed, "steps_failed", len(rep.Failed))
	return rep, nil
}

// firstSteps are the steps of a run's first page: stuck commits, then
// holds and retention, which must not wait behind a mirror that cannot
// be read (the mirrors then see holds settled), then the zone rules'
// moves, whose mirrors follow in the same run.
func firstSteps(ctx workflow.Context, in ReconcileInput, rep *ReconcileReport, step func(string, error) error) error {
	var stuck booking.StuckReport
	err := workflow.ExecuteActivity(ctx, booking.ActivityReconcileStuck, booking.StuckInput{Before: in.From.Add(-in.StuckAfter),
		TaskQueue: workflow.GetInfo(ctx).TaskQueueName, Limit: in.BatchSize}).Get(ctx, &stuck)
	if err := step(booking.ActivityReconcileStuck, err); err != nil {
		return err
	}
	rep.Stuck = stuck
	if rep.HoldsExpired, err = drain(ctx, booking.ActivityExpireStaleHolds, in.BatchSize); step(booking.ActivityExpireStaleHolds, err) != nil {
		return err
	}
	if rep.ContactsPurged, err = drain(ctx, booking.ActivityPurgeContacts, in.BatchSize); step(booking.ActivityPurgeContacts, err) != nil {
		return err
	}
	if workflow.GetVersion(ctx, changeRetention, workflow.DefaultVersion, 1) == 1 {
		if rep.Retired, err = drain(ctx, booking.ActivityApplyRetention, in.BatchSize); step(booking.ActivityApplyRetention, err) != nil {
			return err
		}
	}
	if workflow.GetVersion(ctx, changeZoneRules, workflow.DefaultVersion, 1) == 1 {
		if rep.ZoneRules, err = followZoneRules(ctx, in.BatchSize); step(booking.ActivityFollowZoneRules, err) != nil {
			return err
		}
	}
	return nil
}

// noteSteps records how every step of the run ended, for ops attention:
// the failed ones, and the others as through.
func noteSteps(ctx workflow.Context, failed []booking.StepOutcome) error {
	steps := append([]booking.StepOutcome(nil), failed...)
	for _, name := range booking.ReconcileSteps {
		if !slices.ContainsFunc(failed, func(f booking.StepOutcome) bool { return f.Step == name }) {
			steps = append(steps, booking.StepOutcome{Step: name})
		}
	}
	return workflow.ExecuteActivity(ctx, booking.ActivityNoteReconcile, booking.NoteReconcileInput{Steps: steps}).Get(ctx, nil)
}

// drain runs a batch activity until a batch comes back short, at most ten
// batches a run; the rest waits for the next run.
func drain(ctx workflow.Context, act string, limit int) (int, error) {
	total := 0
	for range 10 {
		var out booking.CountOutput
		if err := workflow.ExecuteActivity(ctx, act, booking.LimitInput{Limit: limit}).Get(ctx, &out); err != nil {
			return total, err
		}
		total += out.Count
		if out.Count < limit {
			break
		}
	}
	return total, nil
}

// followZoneRules runs FollowZoneRules as drain runs a batch activity.
func followZoneRules(ctx workflow.Context, limit int) (booking.ZoneRulesReport, error) {
	var total booking.ZoneRulesReport
	for range 10 {
		var out booking.ZoneRulesReport
		if err := workflow.ExecuteActivity(ctx, booking.ActivityFollowZoneRules, booking.LimitInput{Limit: limit}).Get(ctx, &out); err != nil {
			return total, err
		}
		total.Checked, total.Moved, total.Flagged = total.Checked+out.Checked, total.Moved+out.Moved, total.Flagged+out.Flagged
		total.Details = capDetails(append(total.Details, out.Details...))
		if out.Checked < limit {
			break
		}
	}
	return total, nil
}

func addCalendar(a, b booking.CalendarReport) booking.CalendarReport {
	a.Missing += b.Missing
	a.Moved += b.Moved
	a.Orphans += b.Orphans
	a.Flagged += b.Flagged
	a.AlreadyFlagged += b.AlreadyFlagged
	a.Unknown += b.Unknown
	a.Failed += b.Failed
	a.Details = capDetails(append(a.Details, b.Details...))
	a.Next = nil
	return a
}

func addCRM(a, b booking.CRMReport) booking.CRMReport {
	a.Missing += b.Missing
	a.Mismatched += b.Mismatched
	a.Failed += b.Failed
	a.Details = capDetails(append(a.Details, b.Details...))
	a.Next = nil
	return a
}

// capDetails keeps a report small enough for workflow history across pages.
func capDetails(d []string) []string {
	const most = 200
	if len(d) > most {
		return d[:most]
	}
	return d
}

// reconcileAgencies starts, from the default agency's run, a run of its
// own for every other agency: a child in that agency (its header names
// it, so the store shows the run that agency's rows only, and its
// queries that agency's sagas), which this run does not wait for, so
// that one agency's failing mirror or step holds back no other's. Each
// agency's run has one id (ReconcileRunID in its space): while one runs,
// the next tick starts none beside it, as the schedule skips its own
// overlaps, so a slow agency's runs never pile up.
func reconcileAgencies(ctx workflow.Context, in ReconcileInput) error {
	var all agency.List
	if err := workflow.ExecuteActivity(ctx, booking.ActivityAgencies, booking.LimitInput{}).Get(ctx, &all); err != nil {
		return err
	}
	for _, a := range all.Agencies {
		if a.IsDefault() {
			continue
		}
		cctx := workflow.WithChildOptions(agencyheader.InWorkflow(ctx, a), workflow.ChildWorkflowOptions{
			WorkflowID:            agency.WorkflowID(a, booking.ReconcileRunID),
			ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_ABANDON,
			TypedSearchAttributes: visibility.Agency(a),
			Priority:              visibility.Fairness(a),
		})
		child := workflow.ExecuteChildWorkflow(cctx, Reconcile, ReconcileInput{Window: in.Window, BatchSize: in.BatchSize,
			StuckAfter: in.StuckAfter})
		var started *temporal.ChildWorkflowExecutionAlreadyStartedError
		if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil && !errors.As(err, &started) {
			return err
		}
	}
	return nil
}
