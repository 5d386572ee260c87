package api

import (
	"fmt"
	"strings"

	"github.com/bookingsaga/bookingsaga/receipt"
)

// Say renders a receipt as the one line a voice agent reads. It is derived
// from Status alone: only "confirmed" is worded as a booking, and a pending
// outcome gives the reference with no success wording at all.
func Say(r receipt.Receipt) string {
	when := r.LocalStart
	if when == "" {
		when = "the requested time"
	}
	switch r.Status {
	case receipt.StatusConfirmed:
		return fmt.Sprintf("Confirmed: viewing of %s on %s. Booking reference %s.", r.PropertyRef, when, receipt.Reference(r.RequestKey))
	case receipt.StatusPending:
		return fmt.Sprintf("NOT confirmed yet: the booking system has not answered. Do not say it is booked. Reference %s; check again with booking_status.", r.Reference)
	case receipt.StatusConflict:
		if len(r.Alternatives) == 0 {
			return fmt.Sprintf("%s is no longer free, and no nearby time is free either. Ask the caller for another day.", when)
		}
		var alts []string
		for _, a := range r.Alternatives {
			alts = append(alts, a.LocalStart)
		}
		return fmt.Sprintf("%s is no longer free. Free instead: %s. Ask the caller which one they want.", when, strings.Join(alts, "; "))
	case receipt.StatusRejected:
		msg := "the request was refused"
		if r.Reason != nil {
			msg = r.Reason.Message
			if r.Reason.Retryable {
				return "NOT booked: a temporary problem. Try the same call again in a moment."
			}
		}
		return fmt.Sprintf("NOT booked: %s.", strings.TrimSuffix(msg, "."))
	case receipt.StatusHeld:
		return fmt.Sprintf("%s is held for the caller but NOT booked yet; book it to confirm.", when)
	case receipt.StatusCancelled:
		return fmt.Sprintf("Cancelled: the viewing on %s.", when)
	case receipt.StatusExpired:
		return "The hold on that time expired; nothing is booked."
	case receipt.StatusRescheduled:
		return fmt.Sprintf("This booking was moved; the new booking's key is %s.", r.ReplacedBy)
	}
	return "Nothing is booked yet."
}
