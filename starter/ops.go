package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/desk"
)

const opsUsage = `usage: starter ops <command> [-json]

  attention          sagas pending or not mirrored, and open drift flags
  timeline KEY       one booking: store log, saga state, calendar, CRM, the caller's messages
  reconcile          run the reconciliation schedule now
  resolve ID -note   close a drift flag; the note goes to the event log
  restore KEY        commit again a booking the store lost (flag store_lost_booking),
                     from its saga, under its key: the store decides, as for any commit
  release-lost KEY -note
                     record that a booking the store lost is not booked (booking_lost),
                     once its caller is told; its flags close
  called-back ID -note
                     close a handoff (request_human) once its caller was called back
  outcome KEY attended|no_show|cancelled_by_agency [-note]
                     record how a viewing went: to the CRM, the webhooks (booking.outcome)
                     and the bookingsaga_viewing_outcomes_total metric; another outcome corrects it
  reassign KEY AGENT move a confirmed booking to AGENT at the same time, as a reschedule
                     does: the new booking first, then the old released, the caller messaged
`

// ops runs the operator's commands.
func ops(ctx context.Context, sc *desk.Desk, args []string, out io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(out, opsUsage)
		return errors.New("an ops command is required")
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(out, opsUsage)
		return nil
	}
	fs := flag.NewFlagSet("ops "+args[0], flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	note := fs.String("note", "", "resolve, release-lost, called-back: what was done; outcome: how it went")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return err
	}
	var v any
	switch args[0] {
	case "attention":
		v, err = sc.Attention(ctx)
	case "timeline":
		if len(pos) != 1 {
			return errors.New("timeline needs exactly one request key")
		}
		v, err = sc.Timeline(ctx, pos[0])
	case "reconcile":
		if err = sc.ReconcileNow(ctx); err == nil {
			v = map[string]string{"triggered": booking.ReconcileScheduleID}
		}
	case "restore":
		if len(pos) != 1 {
			return errors.New("restore needs exactly one request key")
		}
		v, err = sc.Restore(ctx, pos[0])
	case "release-lost":
		if len(pos) != 1 || *note == "" {
			return errors.New("release-lost needs exactly one request key and -note")
		}
		v, err = sc.ReleaseLost(ctx, pos[0], *note)
	case "resolve", "called-back":
		var id int64
		var perr error = errors.New("no id")
		if len(pos) == 1 {
			id, perr = strconv.ParseInt(pos[0], 10, 64)
		}
		if perr != nil || *note == "" {
			return fmt.Errorf("%s needs an id and -note", args[0])
		}
		if args[0] == "resolve" {
			v, err = sc.Resolve(ctx, id, *note)
		} else {
			v, err = sc.CalledBack(ctx, id, *note)
		}
	case "outcome":
		if len(pos) != 2 {
			return errors.New("outcome needs a request key and one of attended, no_show, cancelled_by_agency")
		}
		v, err = sc.RecordOutcome(ctx, booking.OutcomeInput{RequestKey: pos[0], Outcome: booking.Outcome(pos[1]), Note: *note})
	case "reassign":
		if len(pos) != 2 {
			return errors.New("reassign needs a request key and the agent to move it to")
		}
		v, err = sc.Reassign(ctx, pos[0], pos[1])
	default:
		fmt.Fprint(out, opsUsage)
		return fmt.Errorf("unknown ops command %q", args[0])
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(out, v)
	}
	return human(out, v)
}

func human(out io.Writer, v any) error {
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	defer w.Flush()
	switch x := v.(type) {
	case desk.Attention:
		if len(x.Sagas) == 0 && len(x.Flags) == 0 && len(x.Handoffs) == 0 && len(x.OutsideRules) == 0 && len(x.ReconcileFailures) == 0 {
			fmt.Fprintln(w, "Nothing needs attention: no saga pending or unmirrored, no open drift flag, no booking outside its rules, "+
				"no caller waiting for a person, no reconciliation step failing.")
			return nil
		}
		fmt.Fprintln(w, "SAGA\tSTATUS\tPROPERTY\tCALENDAR\tCRM")
		for _, s := range x.Sagas {
			status := s.Status
			if status == "" {
				status = "(silent)" // never published one: see the saga in the Temporal UI
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%v\t%v\n", s.RequestKey, status, s.Property, s.CalendarSynced, s.CRMSynced)
		}
		fmt.Fprintln(w, "\nFLAG\tKIND\tREQUEST KEY\tCALENDAR\tEVENT\tFOUND")
		for _, f := range x.Flags {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", f.ID, f.Kind, f.RequestKey, f.CalendarID, f.EventID, f.FoundAt.Format(time.RFC3339))
			if f.Detail != "" {
				fmt.Fprintf(w, "\t%s\n", f.Detail)
			}
		}
		if len(x.OutsideRules) > 0 {
			fmt.Fprintln(w, "\nOUTSIDE RULES\tRESOURCE\tSTARTS\tREASON\tFREE THEN")
			for _, o := range x.OutsideRules {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", o.RequestKey, o.ResourceID, o.StartsAt.Format(time.RFC3339), o.Reason, strings.Join(o.FreeAgents, " "))
			}
		}
		if len(x.Handoffs) > 0 {
			fmt.Fprintln(w, "\nHANDOFF\tTOPIC\tCALL\tASKED\tCALL BACK\tREASON")
			for _, h := range x.Handoffs {
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", h.ID, h.Topic, h.ConversationID, h.RequestedAt.Format(time.RFC3339), callBack(h.Callback), h.Reason)
			}
		}
		if len(x.ReconcileFailures) > 0 {
			fmt.Fprintln(w, "\nRECONCILE STEP\tFAILING SINCE\tLAST\tERROR")
			for _, f := range x.ReconcileFailures {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", f.Step, f.Since.Format(time.RFC3339), f.Last.Format(time.RFC3339), f.Error)
			}
		}
	case desk.Timeline:
		if b := x.Booking; b != nil {
			fmt.Fprintf(w, "store\t%s\t%s → %s\t%s\n", b.Status, b.Intent.StartsAt.Format(time.RFC3339), b.Intent.EndsAt.Format(time.RFC3339), b.Intent.TimeZone)
		} else {
			fmt.Fprintln(w, "store\tno booking")
		}
		if s := x.Saga; s != nil {
			fmt.Fprintf(w, "saga\t%s\tcalendar synced %v, crm synced %v\t%s\n", s.State, s.CalendarSynced, s.CRMSynced, s.LastError)
		}
		for _, c := range x.Calendar {
			fmt.Fprintf(w, "calendar %s:%s\t%s\t%s\n", c.Provider, c.CalendarID, c.Status, c.Start.Format(time.RFC3339))
		}
		if x.CRM != nil {
			fmt.Fprintf(w, "crm %s\t%s\t%s\n", x.CRM.ID, x.CRM.Status, x.CRM.StartsAt.Format(time.RFC3339))
		}
		for _, m := range x.Messages {
			fmt.Fprintf(w, "caller %s\t%s\t%s, %d tries\t%s\n", m.Kind, m.Status, m.Channel, m.Attempts, m.LastError)
		}
		for _, e := range x.Events {
			fmt.Fprintf(w, "event\t%s\t%s\t%s\n", e.OccurredAt.Format(time.RFC3339), e.Kind, e.Detail)
		}
		for _, e := range x.Errors {
			fmt.Fprintf(w, "unreadable\t%s\n", e)
		}
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, string(data))
	}
	return nil
}

// callBack is where and when to call a caller back, for the operator.
func callBack(c *booking.Callback) string {
	switch {
	case c == nil:
		return "(no number)"
	case c.Window == "":
		return c.Number
	}
	return c.Number + " (" + c.Window + ")"
}
