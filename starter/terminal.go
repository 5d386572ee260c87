package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/speech"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// terminal runs book, status, cancel or reschedule and prints the receipt.
func terminal(ctx context.Context, sc *desk.Desk, cmd string, args []string, out io.Writer) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the receipt as JSON")
	var slot edge.Slot
	var policy, key string
	if cmd == "book" || cmd == "reschedule" {
		fs.StringVar(&slot.PropertyID, "property", "", "property id")
		fs.StringVar(&slot.AgentID, "agent", "", "agent id")
		fs.StringVar(&slot.StartsAt, "start", "", "start, RFC 3339 with offset")
		fs.StringVar(&slot.LocalStart, "local", "", "start as local wall time, e.g. 2026-12-08T10:00 (with -zone)")
		fs.StringVar(&slot.TimeZone, "zone", "", "the property's IANA zone")
		minutes := 30
		if cmd == "reschedule" {
			minutes = 0 // the old booking's
		}
		fs.IntVar(&slot.DurationMinutes, "minutes", minutes, "length in minutes (reschedule: the old booking's)")
		fs.StringVar(&policy, "policy", "", "expected policy version (from availability)")
		fs.StringVar(&key, "key", "", "request key; a new one is made (and printed) when empty: reuse it to retry")
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	r, err := runTerminal(ctx, sc, cmd, pos, api.BookingBody{RequestKey: key, Slot: slot, ExpectedPolicyVersion: policy})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(out, r)
	}
	_, err = fmt.Fprintf(out, "%-22s %s\n%-22s %s\n", "status", r.Status, "request_key", r.RequestKey)
	if err == nil {
		_, err = fmt.Fprintf(out, "%-22s %s\n", "agent may say", speech.Speaker{Lang: speech.English}.Receipt(r))
	}
	return err
}

func runTerminal(ctx context.Context, sc *desk.Desk, cmd string, pos []string, b api.BookingBody) (receipt.Receipt, error) {
	if cmd != "book" && len(pos) != 1 {
		return receipt.Receipt{}, fmt.Errorf("%s needs exactly one request key", cmd)
	}
	switch cmd {
	case "status":
		// A reference is what a caller reads back (BS-XXXX-XXXX); request
		// keys can't start with it (booking.ValidateKey).
		if strings.HasPrefix(pos[0], booking.ReferencePrefix) {
			return sc.ByReference(ctx, pos[0])
		}
		return sc.Status(ctx, pos[0])
	case "cancel":
		return sc.Cancel(ctx, pos[0])
	}
	if b.RequestKey == "" {
		b.RequestKey = uuid.NewString()
	}
	if cmd == "reschedule" {
		if err := missing(cmd, b, "-start or -local", "-policy"); err != nil {
			return receipt.Receipt{}, err
		}
		// The booking as the store holds it, other resources included.
		old, err := sc.Timeline(ctx, pos[0])
		if err != nil {
			return receipt.Receipt{}, err
		}
		if old.Booking == nil {
			return receipt.Receipt{}, fmt.Errorf("the store holds no booking under %s to move; check its status first", pos[0])
		}
		move := edge.RescheduleBody{Slot: b.Slot, ExpectedPolicyVersion: b.ExpectedPolicyVersion}
		move.DefaultFrom(old.Booking.Intent, "")
		b.Slot, b.ExpectedPolicyVersion = move.Slot, move.ExpectedPolicyVersion
	} else if err := missing(cmd, b, "-property", "-agent", "-zone", "-start or -local", "-policy"); err != nil {
		return receipt.Receipt{}, err
	}
	req, e := b.Request(time.Now())
	if e != nil {
		return receipt.Receipt{}, e
	}
	if cmd == "reschedule" {
		return sc.Reschedule(ctx, pos[0], b.RequestKey, req)
	}
	return sc.Commit(ctx, b.RequestKey, req)
}

// missing names every one of flags that b lacks, at once.
func missing(cmd string, b api.BookingBody, flags ...string) error {
	set := map[string]bool{"-property": b.PropertyID != "", "-agent": b.AgentID != "", "-zone": b.TimeZone != "",
		"-start or -local": b.StartsAt != "" || b.LocalStart != "", "-policy": b.ExpectedPolicyVersion != ""}
	var lack []string
	for _, f := range flags {
		if !set[f] {
			lack = append(lack, f)
		}
	}
	if len(lack) == 0 {
		return nil
	}
	return fmt.Errorf("%s needs %s", cmd, strings.Join(lack, ", "))
}

// parseInterleaved parses flags wherever they stand among the positional
// arguments ("cancel KEY -json" as well as "cancel -json KEY"), and
// returns the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// printJSON is every command's --json output.
func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func joinSorted(xs []string) string {
	slices.Sort(xs)
	return strings.Join(xs, ", ")
}
