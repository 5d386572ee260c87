package msgraph

import (
	"context"
	"errors"
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
//
// A mailbox that cannot be read is left out of the answer and named in
// the error, beside the mailboxes that could: never an empty, free one.
func (m *Mirror) FreeBusy(ctx context.Context, mailboxes []string, from, to time.Time) (map[string][]calendars.Interval, error) {
	out := make(map[string][]calendars.Interval, len(mailboxes))
	var errs []error
	for i := 0; i < len(mailboxes); i += scheduleBatch {
		batch := mailboxes[i:min(i+scheduleBatch, len(mailboxes))]
		errs = append(errs, m.schedule(ctx, batch, from, to, out))
	}
	return out, errors.Join(errs...)
}

func (m *Mirror) schedule(ctx context.Context, mailboxes []string, from, to time.Time, out map[string][]calendars.Interval) error {
	body := map[string]any{"schedules": mailboxes, "startTime": utc(from), "endTime": utc(to)}
	var res struct {
		Value []struct {
			ScheduleID    string         `json:"scheduleId"`
			ScheduleItems []scheduleItem `json:"scheduleItems"`
			Error         *struct {
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
	var errs []error
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
		answered[id] = true
		if s.Error != nil {
			errs = append(errs, fmt.Errorf("graph getSchedule: mailbox %s: %s %s", id, s.Error.ResponseCode, s.Error.Message))
			continue
		}
		busy, err := busyItems(s.ScheduleItems)
		if err != nil {
			errs = append(errs, fmt.Errorf("graph getSchedule: mailbox %s: %w", id, err))
			continue
		}
		out[id] = busy
	}
	for _, mb := range mailboxes {
		if !answered[mb] {
			errs = append(errs, fmt.Errorf("graph getSchedule: mailbox %s missing from the answer", mb))
		}
	}
	return errors.Join(errs...)
}

// scheduleItem is one item of a getSchedule answer.
type scheduleItem struct {
	Status string        `json:"status"`
	Start  *dateTimeZone `json:"start"`
	End    *dateTimeZone `json:"end"`
}

// busyItems are the intervals of the items that make the mailbox busy.
func busyItems(items []scheduleItem) ([]calendars.Interval, error) {
	var out []calendars.Interval
	for _, it := range items {
		if !busyStatuses[strings.ToLower(it.Status)] {
			continue
		}
		start, err1 := it.Start.instant()
		end, err2 := it.End.instant()
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("bad item: %w", err)
		}
		out = append(out, calendars.Interval{Start: start, End: end})
	}
	return out, nil
}
