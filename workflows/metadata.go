package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// What the Temporal UI shows of a saga (its user metadata): a one-line
// summary fixed at start, current details the saga keeps up to date, and
// a summary on each activity and timer, so that the list and the event
// history read as bookings and business steps. None of it names the
// caller: the contact is sealed and erasable, and history could not be.

// Summary is the line a booking saga is listed under: what, where, when in
// the property's local time, and the reference the caller was given.
func Summary(key string, in booking.Intent) string {
	what := "Viewing"
	if in.Replaces != "" {
		what = "Viewing (reschedule of " + receipt.Reference(in.Replaces) + ")"
	}
	return fmt.Sprintf("%s · %s · %s · %s", what, in.PropertyID, localWhen(in.StartsAt, in.TimeZone), receipt.Reference(key))
}

// StaticDetails is what the saga was started to book, fixed at start: the
// resources, the local time, the policy version and whether it is a hold.
func StaticDetails(req booking.CommitRequest) string {
	var b strings.Builder
	b.WriteString("| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(&b, "| %s | %s |\n", k, v) }
	in := req.Intent
	row("Property", in.PropertyID)
	if in.AgentPool != "" {
		row("Agent", "whoever is free in "+in.AgentPool)
	} else {
		row("Agent", in.AgentID)
	}
	if len(in.ExtraResources) > 0 {
		row("Also", strings.Join(in.ExtraResources, ", "))
	}
	row("Viewing", localSpan(in.StartsAt, in.EndsAt, in.TimeZone))
	row("Policy version", req.ExpectedPolicyVersion)
	if req.Hold {
		row("Asked for", "a hold")
	}
	return b.String()
}

// localWhen is an instant as a reader in its zone says it.
func localWhen(t time.Time, zone string) string {
	loc, err := localtime.LoadZone(zone)
	if err != nil {
		return t.UTC().Format("Mon 2 Jan 2006 15:04") + " UTC"
	}
	return t.In(loc).Format("Mon 2 Jan 2006 15:04") + " " + zone
}

// stepSummaries name the saga's activities as the business steps they are.
var stepSummaries = map[string]string{
	booking.ActivityCommit:       "commit in the store",
	booking.ActivityConfirm:      "confirm the hold in the store",
	booking.ActivityLookup:       "look up the store's decision",
	booking.ActivityLapse:        "record the lapsed intent in the store",
	booking.ActivityExpireHold:   "expire the hold in the store",
	booking.ActivityRelease:      "release the booking in the store",
	booking.ActivitySyncCalendar: "write calendar event",
	booking.ActivitySyncCRM:      "write CRM viewing",
}

// activity runs an activity under its business name (user metadata is
// behind changeUserMetadata, like every change since the first release).
func (s *saga) activity(ctx workflow.Context, name string, arg any) workflow.Future {
	if s.meta {
		o := workflow.GetActivityOptions(ctx)
		o.Summary = stepSummaries[name]
		ctx = workflow.WithActivityOptions(ctx, o)
	}
	return workflow.ExecuteActivity(ctx, name, arg)
}

// localActivity is activity for a local one.
func (s *saga) localActivity(ctx workflow.Context, name string, arg any) workflow.Future {
	if s.meta {
		o := workflow.GetLocalActivityOptions(ctx)
		o.Summary = stepSummaries[name]
		ctx = workflow.WithLocalActivityOptions(ctx, o)
	}
	return workflow.ExecuteLocalActivity(ctx, name, arg)
}

// named is a timer's summary: what its firing means.
func (s *saga) named(summary string) string {
	if !s.meta {
		return ""
	}
	return summary
}

// sleep is workflow.Sleep under a summary.
func (s *saga) sleep(ctx workflow.Context, d time.Duration, summary string) error {
	if !s.meta {
		return workflow.Sleep(ctx, d)
	}
	return workflow.NewTimerWithOptions(ctx, d, workflow.TimerOptions{Summary: summary}).Get(ctx, nil)
}

// describe sets the saga's current details: its state and what the agent
// is told, the store's booking, each mirror, the last error and what
// happens next (next is empty when nothing is due).
func (s *saga) describe(ctx workflow.Context, next string, at time.Time) {
	if !s.meta {
		return
	}
	r := s.receipt()
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** · the agent is told `%s`\n\n| | |\n|---|---|\n", s.st.State, r.Status)
	row := func(k, v string) { fmt.Fprintf(&b, "| %s | %s |\n", k, v) }
	zone := ""
	if in := s.intent(); in != nil {
		zone = in.TimeZone
		row("Viewing", localSpan(in.StartsAt, in.EndsAt, in.TimeZone))
		row("Property · agent", in.PropertyID+" · "+in.AgentID)
	}
	row("Reference", receipt.Reference(s.st.RequestKey))
	if bk := s.st.Booking; bk != nil {
		row("Store booking", fmt.Sprintf("`%s` (%s)", bk.BookingID, bk.Status))
	} else {
		row("Store booking", "none yet")
	}
	if s.st.Reason != nil {
		row("Reason", fmt.Sprintf("`%s` %s", s.st.Reason.Code, s.st.Reason.Message))
	}
	if s.st.State == StateConfirmed || s.st.State.decided() && s.dirty {
		row("Calendar", synced(s.st.CalendarSynced))
		row("CRM", synced(s.st.CRMSynced))
	}
	if s.st.Messaged != "" {
		row("Caller", "last message "+string(s.st.Messaged))
	}
	if s.st.LastError != "" {
		row("Last error", strings.ReplaceAll(s.st.LastError, "|", "\\|"))
	}
	if next != "" {
		row("Next", next+" · "+localWhen(at, zone))
	}
	workflow.SetCurrentDetails(ctx, b.String())
}

// localSpan is a viewing's local date, start and end.
func localSpan(start, end time.Time, zone string) string {
	loc, err := localtime.LoadZone(zone)
	if err != nil {
		loc, zone = time.UTC, "UTC"
	}
	return start.In(loc).Format("Mon 2 Jan 2006 15:04") + "–" + end.In(loc).Format("15:04") + " " + zone
}

func synced(ok bool) string {
	if ok {
		return "written"
	}
	return "not written yet (retrying)"
}
