package calendars

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Provider is one calendar service, addressed by its own calendar ids.
type Provider interface {
	// Upsert makes b.Calendar show b, however often it is called.
	Upsert(ctx context.Context, b Booking) (Synced, error)
	// Delete removes a booking's event; an event already gone is done.
	Delete(ctx context.Context, calendarID, requestKey, bookingID string) error
	// Lookup returns a booking's event, nil when there is none; a
	// provider that keeps deleted events (Google) may return one with
	// Status "cancelled".
	Lookup(ctx context.Context, calendarID, requestKey string) (*Event, error)
	// Events lists the live events overlapping [from, to), ours and others'.
	Events(ctx context.Context, calendarID string, from, to time.Time) ([]Event, error)
	// FreeBusy returns each calendar's busy periods in [from, to); one
	// that cannot be read is left out and named in the error.
	FreeBusy(ctx context.Context, calendarIDs []string, from, to time.Time) (map[string][]Interval, error)
	// EventID is the id a booking's event has before it is written, or ""
	// when the provider only assigns one on creation.
	EventID(requestKey string) string
}

// Router sends each call to the provider of its calendar. A calendar whose
// provider this process has no credentials for is refused for good: no
// retry can write it until an operator configures the provider.
type Router struct {
	providers map[string]Provider
	// readOnly refuses writes before any provider sees them.
	readOnly bool
}

// NewRouter routes to providers by name (booking.ProviderGoogle, ...).
// Nil providers are left out.
func NewRouter(providers map[string]Provider) *Router {
	r := &Router{providers: map[string]Provider{}}
	for name, p := range providers {
		if p != nil {
			r.providers[name] = p
		}
	}
	return r
}

// ReadOnly is the router refusing every write with ErrReadOnly before
// it reaches a provider: the API's, which holds read credentials only,
// so that a bug there finds no write path whatever the adapter.
func (r *Router) ReadOnly() *Router {
	return &Router{providers: r.providers, readOnly: true}
}

func (r *Router) provider(cal Ref) (Provider, error) {
	p, ok := r.providers[cal.Provider]
	if !ok {
		return nil, &RefusedError{Err: fmt.Errorf("calendar %s: provider %q is not configured in this process", cal.ID, cal.Provider)}
	}
	return p, nil
}

// Upsert writes b's event in its calendar.
func (r *Router) Upsert(ctx context.Context, b Booking) (Synced, error) {
	if r.readOnly {
		return Synced{}, fmt.Errorf("calendar upsert %s: %w", b.RequestKey, ErrReadOnly)
	}
	p, err := r.provider(b.Calendar)
	if err != nil {
		return Synced{}, err
	}
	return p.Upsert(ctx, b)
}

// Delete removes a booking's event from cal.
func (r *Router) Delete(ctx context.Context, cal Ref, requestKey, bookingID string) error {
	if r.readOnly {
		return fmt.Errorf("calendar delete %s: %w", requestKey, ErrReadOnly)
	}
	p, err := r.provider(cal)
	if err != nil {
		return err
	}
	return p.Delete(ctx, cal.ID, requestKey, bookingID)
}

// Lookup returns a booking's event in cal, nil when there is none.
func (r *Router) Lookup(ctx context.Context, cal Ref, requestKey string) (*Event, error) {
	p, err := r.provider(cal)
	if err != nil {
		return nil, err
	}
	return p.Lookup(ctx, cal.ID, requestKey)
}

// Events lists cal's live events overlapping [from, to).
func (r *Router) Events(ctx context.Context, cal Ref, from, to time.Time) ([]Event, error) {
	p, err := r.provider(cal)
	if err != nil {
		return nil, err
	}
	return p.Events(ctx, cal.ID, from, to)
}

// EventID is the id a booking's event has in cal before it is written, or
// "" when cal's provider assigns ids on creation.
func (r *Router) EventID(cal Ref, requestKey string) string {
	p, err := r.provider(cal)
	if err != nil {
		return ""
	}
	return p.EventID(requestKey)
}

// FreeBusy asks each provider once for its calendars' busy periods, the
// providers side by side: the commit's re-check waits for the slower one,
// not for both in turn. What could not be read (a provider that failed,
// or one this process lacks) is missing from the answer and named in the
// error, beside what could.
func (r *Router) FreeBusy(ctx context.Context, cals []Ref, from, to time.Time) (map[Ref][]Interval, error) {
	byProvider := map[string][]string{}
	var order []string // providers in the order first asked, for a stable error
	var errs []error
	for _, c := range cals {
		if _, err := r.provider(c); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, seen := byProvider[c.Provider]; !seen {
			order = append(order, c.Provider)
		}
		byProvider[c.Provider] = append(byProvider[c.Provider], c.ID)
	}
	busy := make([]map[string][]Interval, len(order))
	failed := make([]error, len(order))
	var wg sync.WaitGroup
	for i, name := range order {
		wg.Go(func() { busy[i], failed[i] = r.providers[name].FreeBusy(ctx, byProvider[name], from, to) })
	}
	wg.Wait()
	out := make(map[Ref][]Interval, len(cals))
	for i, name := range order {
		errs = append(errs, failed[i]) // beside what it could read
		for id, periods := range busy[i] {
			out[Ref{Provider: name, ID: id}] = periods
		}
	}
	return out, errors.Join(errs...)
}
