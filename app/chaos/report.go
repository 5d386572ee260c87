package chaos

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/bookingsaga/bookingsaga/receipt"
)

// Report is a run's result: the calls, the faults and the invariants.
type Report struct {
	Duration   time.Duration
	Calls      []Call
	Faults     []FaultResult
	Invariants []Invariant
	// Settled is how long the checks took to pass after the load stopped
	// (or until they were given up on).
	Settled time.Duration
	// Texts and Mails are what the fakes took; the copies, how many of
	// them were a message taken before: a reply lost after the send, or a
	// worker killed between a send and its mark (an e-mail's copy has the
	// same Message-ID, for the mailbox to fold).
	Texts, Mails, TextCopies, MailCopies int
	// Stops are the callers who texted STOP during the run, and Answers
	// the replies not understood the API answered.
	Stops, Answers int
	// Meetings and Contacts are what the HubSpot accounts hold at the end.
	Meetings, Contacts int
	// Hooks are each agency's webhook deliveries taken, by id.
	Hooks map[string]int
	// Confirmed is each agency's confirmed bookings at the end, by id.
	Confirmed map[string]int
	// Flood is what a second key flooding MCP writes met (Options.Flooders).
	Flood *FloodResult
}

// OK reports whether every invariant held.
func (r *Report) OK() bool {
	for _, inv := range r.Invariants {
		if len(inv.Violations) > 0 {
			return false
		}
	}
	return true
}

// recoveries finds, for each fault, the first booking confirmed by a call
// sent after the restore.
func recoveries(faults []FaultResult, calls []Call) []FaultResult {
	sort.Slice(calls, func(i, j int) bool { return calls[i].End.Before(calls[j].End) })
	for i := range faults {
		f := &faults[i]
		for _, c := range calls {
			confirmed := c.Receipt != nil && c.Receipt.Status == receipt.StatusConfirmed
			if confirmed && c.Start.After(f.At) && c.End.Before(f.Restored) {
				f.ConfirmedWhileDown++
			}
			if confirmed && c.Start.After(f.Restored) {
				f.Recovered = c.End
				break
			}
		}
	}
	return faults
}

// Print writes the run's tables: calls by outcome, faults with their
// recovery, and the invariants with the first violations of each.
func (r *Report) Print(w io.Writer) {
	type tally struct {
		calls, ok, fail, unknown, pending, http5xx int
		slowest, frozen                            time.Duration
	}
	byOp := map[string]*tally{}
	var ops []string
	for _, c := range r.Calls {
		t := byOp[c.Op]
		if t == nil {
			t = &tally{}
			byOp[c.Op] = t
			ops = append(ops, c.Op)
		}
		t.calls++
		switch c.Outcome {
		case OK:
			t.ok++
		case Fail:
			t.fail++
		default:
			t.unknown++
		}
		if c.Receipt != nil && c.Receipt.Status == receipt.StatusPending {
			t.pending++
		}
		if c.HTTP >= 500 {
			t.http5xx++
		}
		if c.HTTP != 0 { // answered: how long the caller waited
			took := c.End.Sub(c.Start)
			t.slowest = max(t.slowest, took)
			if during(r.Faults, frozenFault, c) {
				t.frozen = max(t.frozen, took)
			}
		}
	}
	sort.Strings(ops)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "call\tsent\tok\tfail\tunknown\tof which pending\tof which 5xx\tslowest answer\twhile PostgreSQL frozen\t\n")
	for _, op := range ops {
		t := byOp[op]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", op, t.calls, t.ok, t.fail, t.unknown, t.pending, t.http5xx,
			t.slowest.Round(10*time.Millisecond), t.frozen.Round(10*time.Millisecond))
	}
	tw.Flush()
	fmt.Fprintln(w)
	printFaults(w, r.Faults)
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "invariant\tviolations\n")
	for _, inv := range r.Invariants {
		fmt.Fprintf(tw, "%s\t%d\n", inv.Name, len(inv.Violations))
	}
	tw.Flush()
	for _, inv := range r.Invariants {
		for i, v := range inv.Violations {
			if i == 5 {
				fmt.Fprintf(w, "  ... and %d more\n", len(inv.Violations)-5)
				break
			}
			fmt.Fprintf(w, "  %s: %s\n", inv.Name, v)
		}
	}
	fmt.Fprintf(w, "\ncallers' messages: %d texts (%d copies of one taken before), %d e-mails (%d copies); %d callers texted STOP; %d replies answered\n",
		r.Texts, r.TextCopies, r.Mails, r.MailCopies, r.Stops, r.Answers)
	fmt.Fprintf(w, "hubspot: %d meetings on %d contacts\n", r.Meetings, r.Contacts)
	if len(r.Confirmed) > 1 {
		fmt.Fprintf(w, "confirmed at the end, by agency: %v; webhook deliveries taken: %v\n", r.Confirmed, r.Hooks)
	}
	if r.Flood != nil {
		fmt.Fprintf(w, "%s\n", r.Flood)
	}
	fmt.Fprintf(w, "\nchecks passed %s after the load stopped: %v\n", r.Settled.Round(100*time.Millisecond), r.OK())
}

// frozenFault is the fault whose answers must still come within the
// commit wait and its margin: every booking route's bound.
const frozenFault = "PostgreSQL frozen (SIGSTOP)"

// during reports whether c was in flight while a fault named name was on.
func during(faults []FaultResult, name string, c Call) bool {
	for _, f := range faults {
		if f.Name == name && c.Start.Before(f.Restored) && c.End.After(f.At) {
			return true
		}
	}
	return false
}

// printFaults writes one row per kind of fault: how often it was applied,
// how long it lasted, how many bookings were confirmed meanwhile, and how
// long after each restore the first booking was confirmed (median and
// worst; "never" if one never was).
func printFaults(w io.Writer, faults []FaultResult) {
	var names []string
	downs, agains := map[string][]time.Duration{}, map[string][]time.Duration{}
	never, during := map[string]int{}, map[string]int{}
	for _, f := range faults {
		during[f.Name] += f.ConfirmedWhileDown
		if _, seen := downs[f.Name]; !seen {
			names = append(names, f.Name)
		}
		downs[f.Name] = append(downs[f.Name], f.Restored.Sub(f.At))
		if f.Recovered.IsZero() {
			never[f.Name]++
			continue
		}
		agains[f.Name] = append(agains[f.Name], f.Recovered.Sub(f.Restored))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "fault\ttimes\tdown for (max)\tconfirmed while down\tbooking again after restore (median / max)\tnever\n")
	round := func(d time.Duration) string { return d.Round(10 * time.Millisecond).String() }
	for _, n := range names {
		slices.Sort(downs[n])
		slices.Sort(agains[n])
		again := "-"
		if a := agains[n]; len(a) > 0 {
			again = round(a[len(a)/2]) + " / " + round(a[len(a)-1])
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%d\n", n, len(downs[n]), round(downs[n][len(downs[n])-1]), during[n], again, never[n])
	}
	tw.Flush()
}
