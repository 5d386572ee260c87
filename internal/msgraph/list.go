package msgraph

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/calendars"
)

// Events lists the live events of the mailbox's calendar that overlap
// [from, to), ours and anyone else's, recurring ones as occurrences
// (calendarView), following Graph's @odata.nextLink pages.
func (m *Mirror) Events(ctx context.Context, mailbox string, from, to time.Time) ([]calendars.Event, error) {
	req := request{method: http.MethodGet, path: userPath(mailbox) + "/calendar/calendarView", query: url.Values{
		"startDateTime": {from.UTC().Format(time.RFC3339)}, "endDateTime": {to.UTC().Format(time.RFC3339)},
		"$expand": {expandMarker}, "$top": {"100"},
	}}
	var out []calendars.Event
	for {
		var page struct {
			Value    []event `json:"value"`
			NextLink string  `json:"@odata.nextLink"`
		}
		if err := m.do(ctx, req, &page); err != nil {
			return nil, fmt.Errorf("graph list %s: %w", mailbox, err)
		}
		for _, ev := range page.Value {
			if ev.IsCancelled {
				continue
			}
			n, err := ev.neutral()
			if err != nil {
				return nil, fmt.Errorf("graph list %s: %w", mailbox, err)
			}
			out = append(out, n)
		}
		if page.NextLink == "" {
			return out, nil
		}
		next, err := m.relative(page.NextLink)
		if err != nil {
			return nil, fmt.Errorf("graph list %s: %w", mailbox, err)
		}
		req = next
	}
}

// relative turns a nextLink, an absolute URL under the endpoint, back into
// a request; one that leaves the endpoint is refused rather than followed
// with our token.
func (m *Mirror) relative(link string) (request, error) {
	rest, ok := strings.CutPrefix(link, m.endpoint+"/")
	if !ok {
		return request{}, fmt.Errorf("next page %q is not under %s", link, m.endpoint)
	}
	u, err := url.Parse(rest)
	if err != nil {
		return request{}, fmt.Errorf("next page %q: %w", link, err)
	}
	return request{method: http.MethodGet, path: "/" + u.EscapedPath(), query: u.Query()}, nil
}

// scheduleBatch is how many mailboxes one getSchedule asks about.
const scheduleBatch = 20

// busyStatuses are the schedule items that make a mailbox unavailable;
// "free" and "workingElsewhere" do not.
var busyStatuses = map[string]bool{"busy": true, "tentative": true, "oof": true}

// FreeBusy returns the busy periods of each mailbox in [from, to), from
// calendar/getSchedule. It sees every event shown as busy, including ones
// typed straight into Outlook, which is how a booking that bypassed the
// service is caught. The first mailbox asks on behalf of all: with
// application permissions any mailbox of the tenant may.
func (m *Mirror) FreeBusy(ctx context.Context, mailboxes []string, from, to time.Time) (map[string][]calendars.Interval, error) {
	out := make(map[string][]calendars.Interval, len(mailboxes))
	for i := 0; i < len(mailboxes); i += scheduleBatch {
		batch := mailboxes[i:min(i+scheduleBatch, len(mailboxes))]
		if err := m.schedule(ctx, batch, from, to, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (m *Mirror) schedule(ctx context.Context, mailboxes []string, from, to time.Time, out map[string][]calendars.Interval) error {
	body := map[string]any{"schedules": mailboxes, "startTime": utc(from), "endTime": utc(to)}
	var res struct {
		Value []struct {
			ScheduleID    string `json:"scheduleId"`
			ScheduleItems []struct {
				Status string        `json:"status"`
				Start  *dateTimeZone `json:"start"`
				End    *dateTimeZone `json:"end"`
			} `json:"scheduleItems"`
			Error *struct {
				Message      string `json:"message"`
				ResponseCode string `json:"responseCode"`
			} `json:"error"`
		} `json:"value"`
	}
	err := m.do(ctx, request{method: http.MethodPost, path: userPath(mailboxes[0]) + "/calendar/getSchedule", body: body}, &res)
	if err != nil {
		return fmt.Errorf("graph getSchedule: %w", err)
	}
	answered := map[string]bool{}
	for i, s := range res.Value {
		// scheduleId is the mailbox's SMTP address, which need not be
		// what we asked with (a user principal name, an alias); the
		// answers come in the order asked.
		id := s.ScheduleID
		for _, want := range mailboxes {
			if strings.EqualFold(want, s.ScheduleID) {
				id = want
			}
		}
		if !slices.Contains(mailboxes, id) && i < len(mailboxes) {
			id = mailboxes[i]
		}
		if s.Error != nil {
			return fmt.Errorf("graph getSchedule: mailbox %s: %s %s", id, s.Error.ResponseCode, s.Error.Message)
		}
		answered[id] = true
		for _, it := range s.ScheduleItems {
			if !busyStatuses[strings.ToLower(it.Status)] {
				continue
			}
			start, err1 := it.Start.instant()
			end, err2 := it.End.instant()
			if err1 != nil || err2 != nil {
				return fmt.Errorf("graph getSchedule: mailbox %s: bad item %v %v", id, err1, err2)
			}
			out[id] = append(out[id], calendars.Interval{Start: start, End: end})
		}
	}
	for _, mb := range mailboxes {
		if !answered[mb] {
			return fmt.Errorf("graph getSchedule: mailbox %s missing from the answer", mb)
		}
	}
	return nil
}
