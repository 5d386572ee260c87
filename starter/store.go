package main

// The commands that read or keep the store itself, with no saga client:
// a day's availability and bookings, the policy, and the store's
// maintenance (migrate, retention).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// availability prints the free starts of a property and an agent on one
// local day.
func availability(ctx context.Context, sc edge.Catalogue, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("availability", flag.ContinueOnError)
	property := fs.String("property", "", "property id")
	agent := fs.String("agent", "", "agent id")
	date := fs.String("date", "", "the local day, YYYY-MM-DD")
	zone := fs.String("zone", "", "the property's IANA zone")
	minutes := fs.Int("minutes", 0, "viewing length in minutes; 0 is the policy's slot")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	var lack []string
	for name, v := range map[string]string{"-property": *property, "-agent": *agent, "-date": *date, "-zone": *zone} {
		if v == "" {
			lack = append(lack, name)
		}
	}
	if len(lack) > 0 {
		return fmt.Errorf("availability needs %s", joinSorted(lack))
	}
	loc, err := localtime.LoadZone(*zone)
	if err != nil {
		return fmt.Errorf("-zone %q is not an IANA zone", *zone)
	}
	day, err := time.ParseInLocation("2006-01-02", *date, loc)
	if err != nil {
		return fmt.Errorf("-date %q: want YYYY-MM-DD", *date)
	}
	av, err := sc.Availability(ctx, booking.AvailabilityQuery{PropertyID: *property, AgentID: *agent,
		From: day, To: day.AddDate(0, 0, 1), Duration: time.Duration(*minutes) * time.Minute})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(out, av)
	}
	fmt.Fprintf(out, "policy_version %s, %d free starts (%s)\n", av.PolicyVersion, len(av.Slots), av.TimeZone)
	for _, s := range av.Slots {
		fmt.Fprintln(out, " ", s.LocalStart)
	}
	return nil
}

// bookings lists the bookings of a local day (or days) from the store,
// filtered by property, agent and status: what staff check a day by.
func bookings(ctx context.Context, sc edge.Catalogue, args []string, out io.Writer) error {
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
		next := booking.NextPage(page, q.Limit)
		if next == nil {
			break
		}
		q.After = *next
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

// policy prints the booking policy in force, read from the store
// (DATABASE_URL): a read that starts no workflow.
func policy(ctx context.Context, cfg app.ClientConfig, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("policy", flag.ContinueOnError)
	dbURL := fs.String("database-url", cfg.DatabaseURL, "the booking store (env DATABASE_URL)")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if *dbURL == "" {
		return errors.New("policy reads the store: set -database-url or DATABASE_URL, or start the dev stack here (go run ./worker -dev)")
	}
	v, err := app.OpenReads(ctx, *dbURL, cfg.Mirrors, zap.NewNop())
	if err != nil {
		return err
	}
	defer v.Close()
	p, err := v.Store.CurrentPolicy(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(out, p)
	}
	_, err = fmt.Fprintf(out, "policy %s: %d-minute slots, bookable %s local time, buffers %d/%d min, holds %s, notice %s\n",
		p.Version, p.SlotMinutes, p.Hours(), p.DefaultBufferBeforeMinutes, p.DefaultBufferAfterMinutes, p.HoldTTL, p.MinNotice)
	return err
}

// migrateCmd is starter migrate: the schema brought to this build's
// version, as the schema's owner, once.
func migrateCmd(ctx context.Context, cfg app.ClientConfig, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	url := os.Getenv("MIGRATE_DATABASE_URL")
	if url == "" {
		url = cfg.DatabaseURL
	}
	dbURL := fs.String("database-url", url, "the schema owner's login (env MIGRATE_DATABASE_URL, else DATABASE_URL)")
	after := fs.Bool("after-rollout", false, "also take the steps that wait until no worker of the build before runs (docs/deployment.md, upgrades)")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if *dbURL == "" {
		return fmt.Errorf("migrate needs the schema owner's login: set -database-url or MIGRATE_DATABASE_URL")
	}
	from, to, err := app.Migrate(ctx, *dbURL, *after)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "schema at version %d (was %d)\n", to, from)
	return err
}

// retention is starter retention: the event log's and the bookings'
// retention, as the retention role, every hour (or once).
func retention(ctx context.Context, args []string, logger *zap.Logger) error {
	cfg := app.DefaultRetentionConfig()
	fs := flag.NewFlagSet("retention", flag.ContinueOnError)
	fs.StringVar(&cfg.DatabaseURL, "database-url", os.Getenv("RETENTION_DATABASE_URL"), "the retention role's login (env RETENTION_DATABASE_URL)")
	fs.DurationVar(&cfg.BookingRetention, "booking-retention", cfg.BookingRetention, "as the worker's: how long after the viewing a booking keeps its request key")
	fs.DurationVar(&cfg.EventRetention, "event-retention", cfg.EventRetention, "as the worker's: how long the event log keeps a row")
	fs.DurationVar(&cfg.Every, "every", cfg.Every, "how often a pass runs; 0 runs one and exits (for cron)")
	fs.IntVar(&cfg.Limit, "limit", cfg.Limit, "keys and events one transaction retires")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	return app.RunRetention(ctx, cfg, logger)
}
