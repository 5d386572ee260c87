package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// bookings lists the bookings of a local day (or days) from the store,
// filtered by property, agent and status: what staff check a day by.
func bookings(ctx context.Context, sc api.Catalogue, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("bookings", flag.ContinueOnError)
	property := fs.String("property", "", "property id")
	agent := fs.String("agent", "", "agent id")
	date := fs.String("day", "", "the local day, YYYY-MM-DD")
	days := fs.Int("days", 1, "how many days from -day")
	zone := fs.String("zone", "", "the day's IANA zone; default the property's")
	status := fs.String("status", "", "held, confirmed, cancelled, expired or released_for_reschedule")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if *date == "" || *property == "" && *zone == "" {
		return errors.New("bookings needs -day, and -property or -zone")
	}
	if *zone == "" {
		r, err := sc.Resource(ctx, *property)
		if err != nil {
			return err
		}
		*zone = r.TimeZone
	}
	loc, err := localtime.LoadZone(*zone)
	if err != nil {
		return fmt.Errorf("-zone %q is not an IANA zone", *zone)
	}
	day, err := time.ParseInLocation("2006-01-02", *date, loc)
	if err != nil || *days < 1 {
		return fmt.Errorf("-day %q: want YYYY-MM-DD, and -days at least 1", *date)
	}
	q := booking.ListQuery{PropertyID: *property, AgentID: *agent, Status: booking.Status(*status),
		From: day, To: day.AddDate(0, 0, *days), Limit: 200}
	var all []booking.Booking
	for {
		page, err := sc.Bookings(ctx, q)
		if err != nil {
			return err
		}
		all = append(all, page...)
		if len(page) < q.Limit {
			break
		}
		last := page[len(page)-1]
		q.After = booking.Cursor{StartsAt: last.Intent.StartsAt, RequestKey: last.RequestKey}
	}
	if *asJSON {
		return printJSON(out, all)
	}
	if len(all) == 0 {
		_, err := fmt.Fprintln(out, "No bookings.")
		return err
	}
	w := tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, "local start\tstatus\tproperty\tagent\treference\trequest_key")
	for _, b := range all {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", b.Intent.StartsAt.In(loc).Format(localtime.Layout), b.Status,
			b.Intent.PropertyID, b.Intent.AgentID, receipt.Reference(b.RequestKey), b.RequestKey)
	}
	return w.Flush()
}
