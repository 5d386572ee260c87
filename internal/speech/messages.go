package speech

import (
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Message is the text a caller reads about their booking after the call:
// what happened (kind), the property's name in their language, the local
// time with its zone, the reference, and how to change it. Never an id.
func (s Speaker) Message(kind booking.MessageKind, b booking.Booking) string {
	return s.render("msg_"+string(kind), map[string]string{"property": s.name(b.Intent.PropertyID, "the_property"),
		"when": s.When(b.Intent.StartsAt, b.Intent.TimeZone), "reference": receipt.Reference(b.RequestKey)})
}
