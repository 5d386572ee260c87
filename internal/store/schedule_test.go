package store

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// on returns an instant at hh:mm Paris time (UTC+1 in December) on a
// December 2026 day.
func on(day int, hhmm string) time.Time {
	t, err := time.Parse("2006-01-02T15:04 -07:00", time.Date(2026, 12, day, 0, 0, 0, 0, time.UTC).Format("2006-01-02")+"T"+hhmm+" +01:00")
	if err != nil {
		panic(err)
	}
	return t
}

func slotOn(property, agentID string, day int, from, to string) booking.Intent {
	return booking.Intent{PropertyID: property, AgentID: agentID, StartsAt: on(day, from), EndsAt: on(day, to), TimeZone: "Europe/Paris"}
}

func (f *fixture) rules(t *testing.T, id, kind string, r booking.Rules) {
	t.Helper()
	require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: id, Kind: kind, Capacity: 1, TimeZone: "Europe/Paris", Rules: &r}))
}

func (f *fixture) starts(t *testing.T, property, agentID string, day int) []string {
	t.Helper()
	av, err := f.store.Availability(f.ctx, booking.AvailabilityQuery{PropertyID: property, AgentID: agentID,
		From: on(day, "00:00"), To: on(day, "23:59")})
	require.NoError(t, err)
	out := make([]string, 0, len(av.Slots))
	for _, s := range av.Slots {
		out = append(out, s.LocalStart[len("2026-12-08T"):])
	}
	return out
}

// weekdays is Monday to Friday at the given hours, and Wednesday's too
// when wednesday is nil.
func weekdays(opens, closes string, wednesday []booking.WeeklyHours) []booking.WeeklyHours {
	var out []booking.WeeklyHours
	for _, d := range []string{"mon", "tue", "thu", "fri"} {
		out = append(out, booking.WeeklyHours{Day: d, Opens: opens, Closes: closes})
	}
	if wednesday == nil {
		return append(out, booking.WeeklyHours{Day: "wed", Opens: opens, Closes: closes})
	}
	return append(out, wednesday...)
}

func TestAnAgentOffOnWednesdayAfternoonIsNeitherOfferedNorBooked(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.rules(t, "agent-wed", "agent", booking.Rules{Hours: weekdays("09:00", "18:00",
		[]booking.WeeklyHours{{Day: "wed", Opens: "09:00", Closes: "12:00"}})})

	got := f.starts(t, "paris", "agent-wed", 9) // Wednesday
	require.Equal(t, []string{"09:00", "09:30", "10:00", "10:30", "11:00", "11:30"}, got)
	require.Contains(t, f.starts(t, "paris", "agent-wed", 10), "14:00", "Thursday afternoon is open")

	// A stale offer in hand changes nothing: the commit applies the rule.
	_, err := f.store.Commit(f.ctx, commitReq("wed-pm", slotOn("paris", "agent-wed", 9, "14:00", "14:30")))
	requireCode(t, err, booking.CodeOutsideHours)
	f.booked(t, "wed-am", slotOn("paris", "agent-wed", 9, "10:00", "10:30"))
	_, err = f.store.Commit(f.ctx, commitReq("wed-pm", slotOn("paris", "agent-wed", 9, "14:00", "14:30")))
	requireCode(t, err, booking.CodeOutsideHours) // the store remembers its refusal
}

func TestOnlyTheIntersectionOfPropertyAndAgentHoursIsBookable(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.rules(t, "sat-flat", "property", booking.Rules{Hours: []booking.WeeklyHours{{Day: "sat", Opens: "10:00", Closes: "13:00"}}})
	f.rules(t, "sat-agent", "agent", booking.Rules{Hours: []booking.WeeklyHours{{Day: "sat", Opens: "08:00", Closes: "12:00"}}})

	require.Equal(t, []string{"10:00", "10:30", "11:00", "11:30"}, f.starts(t, "sat-flat", "sat-agent", 12))
	require.Empty(t, f.starts(t, "sat-flat", "sat-agent", 11), "Friday: the property is closed")
	for _, c := range []struct{ from, to string }{{"09:00", "09:30"}, {"12:00", "12:30"}, {"11:30", "12:30"}} {
		_, err := f.store.Commit(f.ctx, commitReq("sat-"+c.from+c.to, slotOn("sat-flat", "sat-agent", 12, c.from, c.to)))
		requireCode(t, err, booking.CodeOutsideHours)
	}
	f.booked(t, "sat-ok", slotOn("sat-flat", "sat-agent", 12, "11:30", "12:00"))
}

func TestAHolidayAndTimeOffAreRefusedAndNotOffered(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.rules(t, "hol-flat", "property", booking.Rules{Hours: weekdays("09:00", "18:00", nil),
		Overrides: []booking.DateHours{{Date: "2026-12-08", Closed: true}, {Date: "2026-12-10", Hours: []booking.OpenRange{{Opens: "14:00", Closes: "15:00"}}}}})
	f.rules(t, "off-agent", "agent", booking.Rules{TimeOff: []booking.Span{{Start: on(9, "14:00"), End: on(9, "16:00")}}})

	require.Empty(t, f.starts(t, "hol-flat", "off-agent", 8), "the holiday")
	require.Equal(t, []string{"14:00", "14:30"}, f.starts(t, "hol-flat", "off-agent", 10), "the date's own hours")
	wed := f.starts(t, "hol-flat", "off-agent", 9)
	require.Contains(t, wed, "13:30")
	require.NotContains(t, wed, "14:00")
	require.NotContains(t, wed, "15:30")
	require.Contains(t, wed, "16:00")

	_, err := f.store.Commit(f.ctx, commitReq("holiday", slotOn("hol-flat", "off-agent", 8, "10:00", "10:30")))
	requireCode(t, err, booking.CodeOutsideHours)
	_, err = f.store.Commit(f.ctx, commitReq("time-off", slotOn("hol-flat", "off-agent", 9, "15:30", "16:00")))
	requireCode(t, err, booking.CodeTimeOff)
}

func TestADailyLimitHoldsUnderConcurrentCommits(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.rules(t, "busy-agent", "agent", booking.Rules{DailyLimit: 2})
	props := []string{"paris", "duo", "keys-flat"}
	require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "keys-flat", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris"}))

	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i, p := range props {
		wg.Go(func() {
			hour := []string{"10:00", "12:00", "15:00"}[i]
			in := slotOn(p, "busy-agent", 9, hour, hour[:3]+"30")
			_, errs[i] = f.store.Commit(f.ctx, commitReq("limit-"+p, in))
		})
	}
	wg.Wait()
	refused := 0
	for _, err := range errs {
		if err != nil {
			requireCode(t, err, booking.CodeLimitReached)
			refused++
		}
	}
	require.Equal(t, 1, refused, "two commits fit the day, the third is refused")
	require.Empty(t, f.starts(t, "paris", "busy-agent", 9), "availability knows the day is full")
	require.NotEmpty(t, f.starts(t, "paris", "busy-agent", 10), "the next day is not")
}

func TestNoticeAndHorizonAreEachTheirOwnRefusal(t *testing.T) {
	t.Parallel()
	f := setup(t)
	p := testPolicy
	p.Version, p.HorizonDays = "with-horizon", 30
	require.NoError(t, f.store.SetPolicy(f.ctx, p))
	f.rules(t, "near-agent", "agent", booking.Rules{HorizonDays: 7, MinNoticeMinutes: 24 * 60})

	req := func(key string, in booking.Intent) CommitRequest {
		r := commitReq(key, in)
		r.ExpectedPolicyVersion = p.Version
		return r
	}
	far := slotOn("paris", agent(1), 8, "10:00", "10:30")
	far.StartsAt, far.EndsAt = far.StartsAt.AddDate(0, 0, 35), far.EndsAt.AddDate(0, 0, 35)
	_, err := f.store.Commit(f.ctx, req("far", far))
	requireCode(t, err, booking.CodeBeyondHorizon)
	_, err = f.store.Commit(f.ctx, req("near-agent-far", slotOn("paris", "near-agent", 20, "10:00", "10:30")))
	requireCode(t, err, booking.CodeBeyondHorizon)
	_, err = f.store.Commit(f.ctx, req("near-agent-soon", slotOn("paris", "near-agent", 7, "18:00", "18:30")))
	requireCode(t, err, booking.CodeTooShortNotice)
	_, err = f.store.Commit(f.ctx, req("near-agent-ok", slotOn("paris", "near-agent", 9, "10:00", "10:30")))
	require.NoError(t, err)
}

func TestBadRulesAreRefusedWithTheirCodeAndWriteNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.rules(t, "ruled", "agent", booking.Rules{DailyLimit: 3})
	before := f.count(t)
	for _, c := range []struct {
		name  string
		zone  string
		rules booking.Rules
		code  booking.Code
	}{
		{"overlapping", "Europe/Paris", booking.Rules{Hours: []booking.WeeklyHours{{Day: "mon", Opens: "09:00", Closes: "12:00"}, {Day: "mon", Opens: "11:00", Closes: "14:00"}}}, booking.CodeInvalidHours},
		{"inverted", "Europe/Paris", booking.Rules{Hours: []booking.WeeklyHours{{Day: "tue", Opens: "18:00", Closes: "09:00"}}}, booking.CodeInvalidHours},
		{"bad day", "Europe/Paris", booking.Rules{Hours: []booking.WeeklyHours{{Day: "funday", Opens: "09:00", Closes: "10:00"}}}, booking.CodeInvalidHours},
		{"unknown zone", "Europe/Atlantis", booking.Rules{}, booking.CodeUnknownTimeZone},
		{"override in a DST gap", "Europe/Paris", booking.Rules{Overrides: []booking.DateHours{{Date: "2027-03-28", Hours: []booking.OpenRange{{Opens: "02:30", Closes: "05:00"}}}}}, booking.CodeInvalidOverride},
		{"override not a date", "Europe/Paris", booking.Rules{Overrides: []booking.DateHours{{Date: "2026-02-30", Closed: true}}}, booking.CodeInvalidOverride},
		{"negative limit", "Europe/Paris", booking.Rules{DailyLimit: -1}, booking.CodeInvalidLimit},
	} {
		err := f.store.UpsertResource(f.ctx, booking.Resource{ID: "ruled", Kind: "agent", Capacity: 1, TimeZone: c.zone, Rules: &c.rules})
		requireCode(t, err, c.code)
	}
	require.Equal(t, before, f.count(t))
	r, err := f.store.Resource(f.ctx, "ruled")
	require.NoError(t, err)
	require.Equal(t, &booking.Rules{DailyLimit: 3}, r.Rules, "the rules in force are untouched")
}

func TestAListingPagesThroughEveryBookingOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "big", Kind: "property", Capacity: 20, TimeZone: "Europe/Paris"}))
	want := map[string]bool{}
	for n := 0; len(want) < 500; n++ {
		day, slot, a := 8+n/480, n%480/20, n%20
		start := on(day, "08:00").Add(time.Duration(slot) * 30 * time.Minute)
		key := fmt.Sprintf("list-%03d", n)
		f.booked(t, key, booking.Intent{PropertyID: "big", AgentID: agent(a),
			StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris"})
		want[key] = true
	}
	f.booked(t, "elsewhere", slotOn("paris", agent(30), 8, "10:00", "10:30"))

	seen := map[string]bool{}
	q := booking.ListQuery{PropertyID: "big", From: on(8, "00:00"), To: on(10, "00:00"), Limit: 37}
	var last booking.Cursor
	for {
		page, err := f.store.Bookings(f.ctx, q)
		require.NoError(t, err)
		for _, b := range page {
			require.False(t, seen[b.RequestKey], "%s listed twice", b.RequestKey)
			require.True(t, b.Intent.StartsAt.After(last.StartsAt) || b.Intent.StartsAt.Equal(last.StartsAt) && b.RequestKey > last.RequestKey)
			seen[b.RequestKey] = true
			last = booking.Cursor{StartsAt: b.Intent.StartsAt, RequestKey: b.RequestKey}
		}
		if len(page) < q.Limit {
			break
		}
		q.After = last
	}
	require.Equal(t, want, seen)

	confirmedOfAgent, err := f.store.Bookings(f.ctx, booking.ListQuery{AgentID: agent(3), Status: booking.StatusConfirmed,
		From: on(8, "00:00"), To: on(9, "00:00"), Limit: 200})
	require.NoError(t, err)
	require.Len(t, confirmedOfAgent, 24, "one a half hour, 08:00 to 20:00")
	_, err = f.store.Bookings(f.ctx, booking.ListQuery{From: on(8, "00:00"), To: on(8, "00:00")})
	requireCode(t, err, booking.CodeInvalidWindow)
	_, err = f.store.Bookings(f.ctx, booking.ListQuery{From: on(8, "00:00"), To: on(9, "00:00"), Status: "lost"})
	requireCode(t, err, booking.CodeInvalidWindow)
}

func TestBookingsThatNewHoursNoLongerAllowAreListed(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "before-change", slotOn("paris", agent(2), 9, "15:00", "15:30"))
	_, err := f.store.Commit(f.ctx, commitReq("still-fine", slotOn("paris", agent(2), 9, "10:00", "10:30")))
	require.NoError(t, err)
	f.rules(t, agent(2), "agent", booking.Rules{Hours: weekdays("09:00", "18:00",
		[]booking.WeeklyHours{{Day: "wed", Opens: "09:00", Closes: "12:00"}})})

	out, err := f.store.OutsideRules(f.ctx, 10)
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.Equal(t, "before-change", out[0].RequestKey)
	require.Equal(t, agent(2), out[0].ResourceID)
	b, err := f.store.Lookup(f.ctx, "before-change")
	require.NoError(t, err)
	require.Equal(t, booking.StatusConfirmed, b.Status, "the booking stands")
}

// Time off added over an agent's booking lists it with the members of the
// agent's teams free then: not one with a booking then, not one off too.
// A property's changed hours name no one.
func TestTimeOffOverABookingNamesTheTeamFreeThen(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.store.PutPool(f.ctx, booking.Pool{ID: "team", Members: []string{agent(2), agent(3), agent(4), agent(5)}}))
	require.NoError(t, f.store.PutPool(f.ctx, booking.Pool{ID: "weekend", Members: []string{agent(2), agent(6)}}))
	f.booked(t, "falls-ill", slotOn("paris", agent(2), 9, "15:00", "15:30"))
	f.booked(t, "busy-then", slotOn("duo", agent(3), 9, "15:15", "15:45"))
	f.booked(t, "closed-on", slotOn("duo", agent(7), 9, "15:00", "15:30"))
	off := []booking.Span{{Start: on(9, "00:00"), End: on(10, "00:00")}}
	f.rules(t, agent(4), "agent", booking.Rules{TimeOff: off})
	f.rules(t, agent(2), "agent", booking.Rules{TimeOff: off})
	require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "duo", Kind: "property", Capacity: 2,
		TimeZone: "Europe/Paris", Rules: &booking.Rules{TimeOff: off}}))

	out, err := f.store.OutsideRules(f.ctx, 10)
	require.NoError(t, err)
	byKey := map[string]booking.OutsideRules{}
	for _, o := range out {
		byKey[o.RequestKey] = o
	}
	require.Len(t, byKey, 3, "busy-then is on duo too")
	require.Equal(t, []string{agent(5), agent(6)}, byKey["falls-ill"].FreeAgents)
	require.True(t, on(9, "15:30").Equal(byKey["falls-ill"].EndsAt))
	require.Equal(t, "duo", byKey["closed-on"].ResourceID)
	require.Empty(t, byKey["closed-on"].FreeAgents)
}
