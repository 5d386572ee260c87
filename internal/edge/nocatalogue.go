package edge

import (
	"context"
	"errors"

	"github.com/bookingsaga/bookingsaga/booking"
)

// errNoCatalogue answers a catalogue route of an API built without the
// store's catalogue: a failure of the deployment, so a retryable 503.
var errNoCatalogue = errors.New("no catalogue: this API was built without the store's reads")

// noCatalogue is the Catalogue of an API that has none.
type noCatalogue struct{}

func (noCatalogue) Availability(context.Context, booking.AvailabilityQuery) (booking.Availability, error) {
	return booking.Availability{}, errNoCatalogue
}
func (noCatalogue) Bookings(context.Context, booking.ListQuery) ([]booking.Booking, error) {
	return nil, errNoCatalogue
}
func (noCatalogue) Resource(context.Context, string) (booking.Resource, error) {
	return booking.Resource{}, errNoCatalogue
}
func (noCatalogue) PutResource(context.Context, booking.Resource) error { return errNoCatalogue }
func (noCatalogue) Policy(context.Context) (booking.Policy, error) {
	return booking.Policy{}, errNoCatalogue
}
func (noCatalogue) PutPolicy(context.Context, booking.Policy) error { return errNoCatalogue }
func (noCatalogue) Pool(context.Context, string) (booking.Pool, error) {
	return booking.Pool{}, errNoCatalogue
}
func (noCatalogue) PutPool(context.Context, booking.Pool) error { return errNoCatalogue }
