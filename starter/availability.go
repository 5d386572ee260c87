package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// availability prints the free starts of a property and an agent on one
// local day.
func availability(ctx context.Context, sc api.Catalogue, args []string, out io.Writer) error {
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
