package api

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/receipt"
)

// TestTheREADMEQuotesTheSpokenLines: the README's receipts table quotes
// what Say renders for each status, placeholders and all.
func TestTheREADMEQuotesTheSpokenLines(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	base := receipt.Receipt{RequestKey: "k", PropertyRef: "<property>", LocalStart: "<local start>"}
	with := func(edit func(*receipt.Receipt)) receipt.Receipt {
		r := base
		edit(&r)
		return r
	}
	for _, r := range []receipt.Receipt{
		with(func(r *receipt.Receipt) { r.Status = receipt.StatusConfirmed }),
		with(func(r *receipt.Receipt) { r.Status, r.Reference = receipt.StatusPending, "<reference>" }),
		with(func(r *receipt.Receipt) {
			r.Status, r.Alternatives = receipt.StatusConflict, []receipt.Slot{{LocalStart: "<alternative>"}}
		}),
		with(func(r *receipt.Receipt) { r.Status = receipt.StatusConflict }),
		with(func(r *receipt.Receipt) {
			r.Status, r.Reason = receipt.StatusRejected, &receipt.Reason{Message: "<reason>"}
		}),
		with(func(r *receipt.Receipt) {
			r.Status, r.Reason = receipt.StatusRejected, &receipt.Reason{Message: "x", Retryable: true}
		}),
		with(func(r *receipt.Receipt) { r.Status = receipt.StatusHeld }),
		with(func(r *receipt.Receipt) { r.Status = receipt.StatusCancelled }),
		with(func(r *receipt.Receipt) { r.Status = receipt.StatusExpired }),
		with(func(r *receipt.Receipt) { r.Status, r.ReplacedBy = receipt.StatusRescheduled, "<new key>" }),
	} {
		line := strings.ReplaceAll(Say(r), receipt.Reference("k"), "<reference>")
		require.Contains(t, string(readme), "`"+line+"`", "%s", r.Status)
	}
}
