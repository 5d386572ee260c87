package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// demo drives a running dev stack the way a voice agent would and prints
// each call, its receipt, and what the store, calendar and CRM hold after.
type demo struct {
	api, calendar, crm, db string
	hubspot                string
	token                  string
	out                    io.Writer
	day                    time.Time
	rows                   [][]string
	keys                   []string
}

const (
	demoProperty = "paris-marais-12"
	demoAgent    = "agent-claire"
	demoCalendar = "paris-marais-12@demo.bookingsaga"
	demoPolicy   = "demo-2026-11"
)

func runDemo(ctx context.Context, cfg app.ClientConfig, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	d := &demo{out: out, token: os.Getenv("API_KEY")}
	fs.StringVar(&d.api, "api", "http://127.0.0.1:8080", "the agent API")
	fs.StringVar(&d.calendar, "fake-calendar", "http://127.0.0.1:8091", "the fake calendar")
	fs.StringVar(&d.crm, "fake-crm", "http://127.0.0.1:8092", "the fake CRM")
	fs.StringVar(&d.hubspot, "fake-hubspot", "http://127.0.0.1:8097", "the fake HubSpot account")
	fs.StringVar(&d.db, "database-url", cfg.DatabaseURL, "the booking store; default: the dev stack's in ./.bookingsaga")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if d.db == "" {
		return errors.New("demo reads the store after its calls: start the dev stack here (go run ./worker -dev), or pass -database-url as its banner printed it")
	}
	loc, err := localtime.LoadZone("Europe/Paris")
	if err != nil {
		return err
	}
	// A fresh day each run, so a demo never meets the last one's bookings.
	now := time.Now().In(loc)
	d.day = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, 7+int(now.Unix()%300))
	for _, step := range []func(context.Context) error{d.duplicates, d.race, d.droppedCalendarReply, d.reschedule, d.cancel} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	d.table("call", "request_key", "status", "booking_id / detail")
	if err := d.afterwards(ctx); err != nil {
		return err
	}
	return d.hubspotViewings(ctx)
}

func (d *demo) at(hour, minute int) time.Time {
	return time.Date(d.day.Year(), d.day.Month(), d.day.Day(), hour, minute, 0, 0, d.day.Location())
}

func (d *demo) book(ctx context.Context, key string, start time.Time) (receipt.Receipt, error) {
	var r receipt.Receipt
	err := d.post(ctx, "/v1/bookings", map[string]any{"request_key": key, "property_id": demoProperty, "agent_id": demoAgent,
		"starts_at": start.Format(time.RFC3339), "time_zone": "Europe/Paris", "duration_minutes": 30,
		"expected_policy_version": demoPolicy, "contact": map[string]string{"name": "Demo Caller", "phone": "+33 6 00 00 00 00"}}, &r)
	return r, err
}

func (d *demo) duplicates(ctx context.Context) error {
	key := uuid.NewString()
	d.keys = append(d.keys, key)
	got := make([]receipt.Receipt, 5)
	errs := make([]error, 5)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i], errs[i] = d.book(ctx, key, d.at(9, 0)) })
	}
	wg.Wait()
	for i, r := range got {
		if errs[i] != nil {
			return errs[i]
		}
		d.row(fmt.Sprintf("duplicate book %d/5", i+1), r)
	}
	return nil
}

func (d *demo) race(ctx context.Context) error {
	got := make([]receipt.Receipt, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range got {
		key := uuid.NewString()
		d.keys = append(d.keys, key)
		wg.Go(func() { got[i], errs[i] = d.book(ctx, key, d.at(10, 0)) })
	}
	wg.Wait()
	for i, r := range got {
		if errs[i] != nil {
			return errs[i]
		}
		d.row(fmt.Sprintf("racing caller %d/3", i+1), r)
	}
	return nil
}

func (d *demo) droppedCalendarReply(ctx context.Context) error {
	fault := map[string]any{"op": "events.insert", "times": 1, "drop_after_save": true}
	if err := d.send(ctx, "POST", d.calendar+"/_fake/faults", fault, nil); err != nil {
		return fmt.Errorf("inject the calendar fault (is the fake calendar running?): %w", err)
	}
	key := uuid.NewString()
	d.keys = append(d.keys, key)
	r, err := d.book(ctx, key, d.at(11, 0))
	d.row("book; calendar reply dropped after save", r)
	return err
}

func (d *demo) reschedule(ctx context.Context) error {
	key, newKey := uuid.NewString(), uuid.NewString()
	d.keys = append(d.keys, key, newKey)
	r, err := d.book(ctx, key, d.at(14, 0))
	if err != nil {
		return err
	}
	d.row("book (to move)", r)
	err = d.post(ctx, "/v1/bookings/"+key+"/reschedule", map[string]any{"new_request_key": newKey, "property_id": demoProperty,
		"agent_id": demoAgent, "starts_at": d.at(16, 0).Format(time.RFC3339), "time_zone": "Europe/Paris",
		"duration_minutes": 30, "expected_policy_version": demoPolicy}, &r)
	d.row("reschedule 14:00 → 16:00", r)
	return err
}

func (d *demo) cancel(ctx context.Context) error {
	key := uuid.NewString()
	d.keys = append(d.keys, key)
	r, err := d.book(ctx, key, d.at(17, 0))
	if err != nil {
		return err
	}
	d.row("book (to cancel)", r)
	err = d.post(ctx, "/v1/bookings/"+key+"/cancel", nil, &r)
	d.row("cancel", r)
	return err
}

func (d *demo) row(call string, r receipt.Receipt) {
	detail := short(r.BookingID)
	switch {
	case r.Status == receipt.StatusConflict:
		detail = fmt.Sprintf("%d alternatives offered", len(r.Alternatives))
	case r.Replaces != "":
		detail += " replaces " + short(r.Replaces)
	case r.Reference != "":
		detail = "reference " + r.Reference
	}
	d.rows = append(d.rows, []string{call, short(r.RequestKey), string(r.Status), detail})
}

func (d *demo) table(header ...string) {
	w := tabwriter.NewWriter(d.out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(header, "\t"))
	for _, r := range d.rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	_ = w.Flush()
	fmt.Fprintln(d.out)
	d.rows = nil
}

// afterwards shows, per request key, what each system holds once the
// mirrors have caught up (or after 15 s, whatever they hold then).
func (d *demo) afterwards(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, d.db)
	if err != nil {
		return fmt.Errorf("read the store (pass -database-url as the dev stack printed it): %w", err)
	}
	defer conn.Close(ctx)
	deadline := time.Now().Add(15 * time.Second)
	for {
		rows, settled, err := d.snapshot(ctx, conn)
		if err != nil {
			return err
		}
		if settled || time.Now().After(deadline) {
			d.rows = rows
			d.table("request_key", "store", "calendar event", "CRM viewing")
			return nil
		}
		time.Sleep(200 * time.Millisecond) // polling other processes for display, not synchronisation under test
	}
}

func (d *demo) snapshot(ctx context.Context, conn *pgx.Conn) ([][]string, bool, error) {
	var events []calendar.Event
	if err := d.send(ctx, "GET", d.calendar+"/_fake/events/"+demoCalendar, nil, &events); err != nil {
		return nil, false, err
	}
	var viewings []crm.Record
	if err := d.send(ctx, "GET", d.crm+"/_fake/viewings", nil, &viewings); err != nil {
		return nil, false, err
	}
	settled := true
	var out [][]string
	for _, key := range d.keys {
		status, bookingID := "none", ""
		err := conn.QueryRow(ctx, "SELECT status, booking_id::text FROM booking WHERE request_key = $1", key).Scan(&status, &bookingID)
		if err != nil && err != pgx.ErrNoRows {
			return nil, false, err
		}
		ev, vw := "none", "none"
		for _, e := range events {
			if e.Id == gcal.EventID(key) {
				ev = e.Status
			}
		}
		for _, v := range viewings {
			if v.BookingID == bookingID && bookingID != "" {
				vw = string(v.Status)
			}
		}
		if (status == "confirmed") != (ev == "confirmed") || (status == "confirmed") != (vw == "scheduled") {
			settled = false
		}
		out = append(out, []string{short(key), status, ev, vw})
	}
	return out, settled, nil
}

func (d *demo) post(ctx context.Context, path string, body, out any) error {
	return d.send(ctx, "POST", d.api+path, body, out)
}

func (d *demo) send(ctx context.Context, method, url string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	if d.token != "" && strings.HasPrefix(url, d.api) {
		req.Header.Set("Authorization", "Bearer "+d.token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w (is the dev stack running? go run ./worker -dev)", method, url, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 && res.StatusCode != http.StatusNoContent {
		return fmt.Errorf("%s %s: %d %s", method, url, res.StatusCode, data)
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	return json.Unmarshal(data, out)
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
