package receipt_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// wire is a receipt as a client decodes the JSON OnWire produces.
func wire(t *testing.T, r receipt.Receipt) map[string]any {
	t.Helper()
	b, err := json.Marshal(receipt.OnWire(r))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// paris is 2027-06-01 10:30 in Paris (CEST, +02:00), written with an offset
// so that OnWire has to move it to UTC.
var paris = time.Date(2027, 6, 1, 10, 30, 0, 0, time.FixedZone("CEST", 2*3600))

func TestOnWireWritesInstantsInUTCAndLocalStartInRequestForm(t *testing.T) {
	t.Parallel()
	start, end := paris, paris.Add(30*time.Minute)
	committed, expires := paris.Add(-time.Hour), paris.Add(-30*time.Minute)
	in := receipt.Receipt{RequestKey: "req-1", Status: receipt.StatusConfirmed, PropertyRef: "prop-1", AgentRef: "agent-1",
		StartsAt: &start, EndsAt: &end, TimeZone: "Europe/Paris", LocalStart: "2027-06-01 10:30 (+02:00, Europe/Paris)",
		BookingID: "b-1", ProviderEventID: "ev-1", PolicyVersion: "p1", CommittedAt: &committed, HoldExpiresAt: &expires,
		Replaces: "req-0", ReplacedBy: "req-2"}

	m := wire(t, in)
	require.ElementsMatch(t, []string{"request_key", "status", "property_ref", "agent_ref", "starts_at", "ends_at",
		"time_zone", "local_start", "booking_id", "provider_event_id", "policy_version", "committed_at",
		"hold_expires_at", "reference", "replaces", "replaced_by"}, keys(m))
	require.Equal(t, "confirmed", m["status"])
	require.Equal(t, "2027-06-01T08:30:00Z", m["starts_at"])
	require.Equal(t, "2027-06-01T09:00:00Z", m["ends_at"])
	require.Equal(t, "2027-06-01T07:30:00Z", m["committed_at"])
	require.Equal(t, "2027-06-01T08:00:00Z", m["hold_expires_at"])
	require.Equal(t, "2027-06-01T10:30", m["local_start"], "the property's wall time, in the form requests use")
	require.Equal(t, receipt.Reference("req-1"), m["reference"])

	// The caller's receipt is a value: its instants keep their zone.
	require.Equal(t, "CEST", start.Location().String())
	require.Equal(t, "2027-06-01 10:30 (+02:00, Europe/Paris)", in.LocalStart)
}

func TestOnWireAlwaysSendsStatusAndOmitsWhatIsUnset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   receipt.Receipt
		want []string
	}{
		{"zero receipt", receipt.Receipt{}, []string{"request_key", "status"}},
		{"pending with a key", receipt.Receipt{RequestKey: "req-1", Status: receipt.StatusPending},
			[]string{"request_key", "status", "reference"}},
		{"reason without busy", receipt.Receipt{RequestKey: "req-1", Status: receipt.StatusRejected,
			Reason: &receipt.Reason{Code: "slot_taken", Message: "taken"}},
			[]string{"request_key", "status", "reference", "reason"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := wire(t, tt.in)
			require.ElementsMatch(t, tt.want, keys(m))
			require.Equal(t, string(tt.in.Status), m["status"])
			if tt.in.Reason != nil {
				// retryable is explicit even when false; busy is left out when empty.
				require.Equal(t, map[string]any{"code": "slot_taken", "message": "taken", "retryable": false}, m["reason"])
			}
		})
	}
}

// The agent words its reply from Status alone, and only StatusConfirmed may
// be read out as booked: the wire keeps every status as it is, whatever else
// the receipt carries, so nothing but a confirmed receipt reaches a client
// as "confirmed".
func TestOnlyAConfirmedReceiptReachesTheWireAsConfirmed(t *testing.T) {
	t.Parallel()
	statuses := []receipt.Status{receipt.StatusConfirmed, receipt.StatusHeld, receipt.StatusConflict,
		receipt.StatusRejected, receipt.StatusPending, receipt.StatusCancelled, receipt.StatusExpired,
		receipt.StatusRescheduled, receipt.StatusReassigned, receipt.StatusOffered,
		"unknown", "", "CONFIRMED"}
	for _, st := range statuses {
		t.Run(string(st), func(t *testing.T) {
			t.Parallel()
			start, committed := paris, paris.Add(-time.Hour)
			// Everything a booked receipt carries, so that nothing but the
			// status can make it read as booked.
			in := receipt.Receipt{RequestKey: "req-1", Status: st, StartsAt: &start, TimeZone: "Europe/Paris",
				BookingID: "b-1", ProviderEventID: "ev-1", CommittedAt: &committed}
			out := receipt.OnWire(in)
			require.Equal(t, st, out.Status)

			b, err := json.Marshal(out)
			require.NoError(t, err)
			var back receipt.Receipt
			require.NoError(t, json.Unmarshal(b, &back))
			require.Equal(t, st, back.Status)
			require.Equal(t, st == receipt.StatusConfirmed, back.Status == receipt.StatusConfirmed)
		})
	}
	require.Equal(t, receipt.Status("pending_reconciliation"), receipt.StatusPending,
		"the pending status is spelled as clients match it")
}

func TestOnWireAlternativesInUTCWithLocalStart(t *testing.T) {
	t.Parallel()
	alts := []receipt.Slot{{StartsAt: paris.Add(time.Hour), EndsAt: paris.Add(90 * time.Minute)}}
	in := receipt.Receipt{RequestKey: "req-1", Status: receipt.StatusConflict, TimeZone: "Europe/Paris", Alternatives: alts}

	out := receipt.OnWire(in)
	require.Len(t, out.Alternatives, 1)
	require.Equal(t, time.UTC, out.Alternatives[0].StartsAt.Location())
	require.Equal(t, time.UTC, out.Alternatives[0].EndsAt.Location())
	require.True(t, out.Alternatives[0].StartsAt.Equal(alts[0].StartsAt))
	require.Equal(t, "2027-06-01T11:30", out.Alternatives[0].LocalStart)

	m := wire(t, in)
	require.Equal(t, []any{map[string]any{"starts_at": "2027-06-01T09:30:00Z", "ends_at": "2027-06-01T10:00:00Z",
		"local_start": "2027-06-01T11:30"}}, m["alternatives"])

	// The caller's slots are not rewritten in place.
	require.Empty(t, alts[0].LocalStart)
	require.Equal(t, "CEST", alts[0].StartsAt.Location().String())
}

func TestOnWireKeepsAGivenReference(t *testing.T) {
	t.Parallel()
	out := receipt.OnWire(receipt.Receipt{RequestKey: "req-1", Reference: "BS-AAAA-BBBB"})
	require.Equal(t, "BS-AAAA-BBBB", out.Reference)
	require.Empty(t, receipt.OnWire(receipt.Receipt{}).Reference, "no key, no reference")
}

func TestReferenceIsStableAndSpelledBSXXXXXXXX(t *testing.T) {
	t.Parallel()
	a, b := receipt.Reference("req-1"), receipt.Reference("req-2")
	require.Equal(t, a, receipt.Reference("req-1"))
	require.NotEqual(t, a, b)
	for _, ref := range []string{a, b} {
		require.Regexp(t, `^BS-[A-Z2-7]{4}-[A-Z2-7]{4}$`, ref)
		require.True(t, strings.HasPrefix(ref, booking.ReferencePrefix))
	}
}

func TestReferenceBytesReadsTheWaysACallerSaysIt(t *testing.T) {
	t.Parallel()
	ref := receipt.Reference("req-1")
	want, err := receipt.ReferenceBytes(ref)
	require.NoError(t, err)
	require.Len(t, want, 5)
	code := strings.ReplaceAll(strings.TrimPrefix(ref, "BS-"), "-", "")
	spellings := map[string]string{
		"lower case":        strings.ToLower(ref),
		"no dashes":         "BS" + code,
		"spaces":            " bs " + code[:4] + " " + code[4:] + " ",
		"dash between each": "BS-" + strings.Join(strings.Split(code, ""), "-"),
	}
	for name, s := range spellings {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := receipt.ReferenceBytes(s)
			require.NoError(t, err)
			require.Equal(t, want, got)
			canon, err := receipt.CanonicalReference(s)
			require.NoError(t, err)
			require.Equal(t, ref, canon)
		})
	}
	other, err := receipt.ReferenceBytes(receipt.Reference("req-2"))
	require.NoError(t, err)
	require.NotEqual(t, want, other)
}

func TestReferenceBytesRefusesAnythingElse(t *testing.T) {
	t.Parallel()
	code := strings.ReplaceAll(strings.TrimPrefix(receipt.Reference("req-1"), "BS-"), "-", "")
	for _, ref := range []string{"", "BS-", code, "XS-" + code, "BS-" + code[:7], "BS-" + code + "A",
		"BS-" + code[:7] + "1", "BS-" + code[:7] + "="} {
		t.Run(ref, func(t *testing.T) {
			t.Parallel()
			_, err := receipt.ReferenceBytes(ref)
			var rej *booking.Rejection
			require.True(t, errors.As(err, &rej), "got %v", err)
			require.Equal(t, booking.CodeInvalidReference, rej.Code)
			_, err = receipt.CanonicalReference(ref)
			require.Error(t, err)
		})
	}
}

func TestHeldErrorNamesTheEarlierBooking(t *testing.T) {
	t.Parallel()
	err := error(&receipt.HeldError{Earlier: receipt.Receipt{RequestKey: "req-0", Reference: receipt.Reference("req-0")}})
	require.Contains(t, err.Error(), "req-0")
	require.Contains(t, err.Error(), receipt.Reference("req-0"))
}
