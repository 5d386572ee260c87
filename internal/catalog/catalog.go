// Package catalog answers what needs no saga: availability (the store's
// free slots less what the calendars show busy), what the store decided on
// a key, a booking's timeline across the store and its mirrors, drift
// flags, and the catalogue's writes (resources, policy). The agent API and
// the ops CLI call it in their own process, so a read starts no workflow
// and a refused read is an answer, not a failed execution in Temporal; the
// activities use the same code for the commit's calendar re-check.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/accounts"
	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// Catalog holds the reads' dependencies. Calendar and CRM are optional:
// without them availability is the store's alone and a timeline shows no
// mirror. They are the deployment's, which serve the default agency;
// Accounts are each agency's own (accounts.Book.For).
type Catalog struct {
	Store    *store.Store
	Calendar *calendars.Router
	CRM      *crm.Router
	Accounts *accounts.Book
	// Log receives warnings (a calendar that cannot be read); nil drops
	// them.
	Log *zap.Logger

	watch watchCache
}

// Availability lists free slots: the store's, less those that the
// resources' calendars show busy (events written past the service). It is
// an offer, not a promise: only the commit decides. A calendar that cannot
// be read leaves the store's slots as they are, with a warning logged.
func (c *Catalog) Availability(ctx context.Context, q booking.AvailabilityQuery) (booking.Availability, error) {
	ids, err := c.Resources(ctx, booking.Intent{PropertyID: q.PropertyID, AgentID: q.AgentID, AgentPool: q.AgentPool,
		ExtraResources: q.ExtraResources})
	if err != nil {
		return booking.Availability{}, fmt.Errorf("availability %s: %w", q.PropertyID, err)
	}
	blocks, err := c.Blocks(ctx, ids, q.From, q.To)
	if err != nil && c.Log != nil {
		c.Log.Warn("calendars not all read; availability leaves out only what those that answered show busy", zap.Error(err))
	}
	if len(blocks) > 0 {
		// Per set of resources the slot would take (each member of a
		// team in turn), as the commit will judge it.
		q.Blocked = func(start, end time.Time, ids []string) bool { return len(Blocked(Only(blocks, ids), start, end)) > 0 }
	}
	av, err := c.Store.Availability(ctx, q)
	if err != nil {
		return booking.Availability{}, fmt.Errorf("availability %s: %w", q.PropertyID, err)
	}
	return av, nil
}

// Resources are the resources whose calendars a booking of in may touch:
// its own, and for a team every member (the commit chooses one).
func (c *Catalog) Resources(ctx context.Context, in booking.Intent) ([]string, error) {
	ids := in.Resources()
	if in.AgentPool == "" {
		return ids, nil
	}
	p, err := c.Store.Pool(ctx, in.AgentPool)
	if err != nil {
		return nil, err
	}
	return append(ids, p.Members...), nil
}

// Decision reads what the store decided on a key, or on the key behind a
// reference. Found false is authoritative: the store decided nothing; a
// key with a call still pending says so (PendingKey).
func (c *Catalog) Decision(ctx context.Context, in booking.DecisionInput) (booking.LookupOutput, error) {
	key := in.RequestKey
	if in.Reference != "" {
		var err error
		if key, err = c.Store.KeyByReference(ctx, in.Reference); errors.Is(err, booking.ErrNotFound) {
			return booking.LookupOutput{}, nil
		} else if err != nil {
			return booking.LookupOutput{}, fmt.Errorf("decision %s: %w", in.Reference, err)
		}
	}
	d, err := c.Store.Decision(ctx, key)
	if errors.Is(err, booking.ErrNotFound) {
		return c.undecided(ctx, key)
	}
	if err != nil {
		return booking.LookupOutput{}, fmt.Errorf("decision %s: %w", key, err)
	}
	return c.Output(ctx, d), nil
}

// undecided is the answer for a key the store decided nothing on.
func (c *Catalog) undecided(ctx context.Context, key string) (booking.LookupOutput, error) {
	pending, err := c.Store.Unsettled(ctx, key)
	if err != nil {
		return booking.LookupOutput{}, fmt.Errorf("decision %s: %w", key, err)
	}
	if pending {
		return booking.LookupOutput{PendingKey: key}, nil
	}
	return booking.LookupOutput{}, nil
}

func (c *Catalog) release(ctx context.Context, req store.ReleaseRequest) (booking.LookupOutput, error) {
	key := req.RequestKey
	if _, err := c.Store.Release(ctx, req); err != nil && !errors.Is(err, booking.ErrNotFound) {
		return booking.LookupOutput{}, fmt.Errorf("release %s: %w", key, err)
	}
	return c.Decision(ctx, booking.DecisionInput{RequestKey: key})
}

// Restore brings back a booking the store lost, as its saga knew it: a
// commit under its key, intent and booking id, with the policy now in
// force, decided under the locks like any other. Booked, the key's open
// flags close; refused, the refusal is the store's decision on the key.
// A key the store knows already is answered as it stands.
func (c *Catalog) Restore(ctx context.Context, b booking.Booking) (booking.LookupOutput, error) {
	if d, err := c.Decision(ctx, booking.DecisionInput{RequestKey: b.RequestKey}); err != nil || d.Found {
		return d, err
	}
	p, err := c.Store.CurrentPolicy(ctx)
	if err != nil {
		return booking.LookupOutput{}, fmt.Errorf("restore %s: %w", b.RequestKey, err)
	}
	req := store.CommitRequest{RestoreID: b.BookingID, CommitRequest: booking.CommitRequest{RequestKey: b.RequestKey,
		Intent: b.Intent, ExpectedPolicyVersion: p.Version}}
	if b.Status == booking.StatusHeld {
		// A lost hold comes back as a hold for what was left of it, never
		// as a booking nobody made; one that has run out lapses, as it
		// would have.
		left := time.Duration(0)
		if b.HoldExpiresAt != nil {
			left = time.Until(*b.HoldExpiresAt).Truncate(time.Second)
		}
		if left < time.Second {
			if _, err := c.Store.RecordRelease(ctx, b, booking.StatusExpired, ""); err != nil {
				return booking.LookupOutput{}, fmt.Errorf("restore %s: %w", b.RequestKey, err)
			}
			return c.Decision(ctx, booking.DecisionInput{RequestKey: b.RequestKey})
		}
		req.Hold, req.HoldTTL, req.HoldUntil = true, left, *b.HoldExpiresAt
	}
	_, err = c.Store.Commit(ctx, req)
	var rej *booking.Rejection
	if err != nil && !errors.As(err, &rej) {
		return booking.LookupOutput{}, fmt.Errorf("restore %s: %w", b.RequestKey, err)
	}
	d, err := c.Decision(ctx, booking.DecisionInput{RequestKey: b.RequestKey})
	if err != nil || !d.Booked() {
		return d, err
	}
	return d, c.closeFlags(ctx, b.RequestKey, "restored under its original key by ops restore")
}

// ReleaseLost records that a booking the store lost is not booked, as an
// operator decided with note (once the caller is told), and closes the
// key's flags: its answer is then the refusal booking_lost, and its
// calendar events go as any event of a booking that is not confirmed.
func (c *Catalog) ReleaseLost(ctx context.Context, b booking.Booking, note string) (booking.LookupOutput, error) {
	if err := c.Store.RecordLoss(ctx, b, note); err != nil {
		return booking.LookupOutput{}, fmt.Errorf("release lost %s: %w", b.RequestKey, err)
	}
	d, err := c.Decision(ctx, booking.DecisionInput{RequestKey: b.RequestKey})
	if err != nil || d.Booked() {
		return d, err
	}
	return d, c.closeFlags(ctx, b.RequestKey, "released by ops release-lost: "+note)
}

// ReleaseAgain applies again a cancellation or move the store lost (its
// saga let b go; the store holds it live): the store releases it, under
// its locks, and the key's flags close. A move (replacedBy set) releases
// it for the reschedule, as its caller heard, even when its new booking
// could not be restored: that one's refusal is its own answer. A store
// that lost the booking as well records it released.
func (c *Catalog) ReleaseAgain(ctx context.Context, b booking.Booking, replacedBy string) (booking.LookupOutput, error) {
	d, err := c.release(ctx, store.ReleaseRequest{RequestKey: b.RequestKey, ReplacedBy: replacedBy})
	if err == nil && !d.Found {
		status := booking.StatusCancelled
		if replacedBy != "" {
			status = booking.StatusReleasedForReschedule
		}
		if _, err := c.Store.RecordRelease(ctx, b, status, replacedBy); err != nil {
			return booking.LookupOutput{}, fmt.Errorf("release again %s: %w", b.RequestKey, err)
		}
		d, err = c.Decision(ctx, booking.DecisionInput{RequestKey: b.RequestKey})
	}
	if err != nil || (d.Booked() && d.Booking.Status.Live()) {
		return d, err
	}
	return d, c.closeFlags(ctx, b.RequestKey, "the lost change applied again by ops restore")
}

// closeFlags resolves the key's open flags with note.
func (c *Catalog) closeFlags(ctx context.Context, key, note string) error {
	flags, err := c.Store.OpenFlags(ctx)
	if err != nil {
		return fmt.Errorf("close flags of %s: %w", key, err)
	}
	for _, f := range flags {
		if f.RequestKey != key {
			continue
		}
		if _, err := c.Store.ResolveFlag(ctx, f.ID, note); err != nil {
			return fmt.Errorf("close flags of %s: %w", key, err)
		}
	}
	return nil
}

// Output is a decision as a lookup answers it: with the calendar event's
// id when it is derived from the key (Google), so the first receipt
// already names it; an id a provider assigns (Microsoft) is named once
// the mirror has recorded it.
func (c *Catalog) Output(ctx context.Context, d booking.Decision) booking.LookupOutput {
	out := booking.LookupOutput{Found: true, Refusal: d.Refusal}
	if d.Booking != nil {
		out.Booking = *d.Booking
		c.EventID(ctx, &out.Booking)
	}
	return out
}

// EventID fills in the booking's calendar event id, the one the mirror
// records (the first of its resources' calendars), when that calendar's
// ids derive from the key.
func (c *Catalog) EventID(ctx context.Context, b *booking.Booking) {
	set, err := c.mirrors(ctx)
	if err != nil || set.Calendar == nil || b.ProviderEventID != "" {
		return
	}
	if cals, err := c.calendared(ctx, b.Intent.Resources()); err == nil && len(cals) > 0 {
		b.ProviderEventID = set.Calendar.EventID(Ref(cals[0]), agency.Scoped(ctx, b.RequestKey)) // as the mirror names it
	}
}

// mirrors are the clients of ctx's agency's mirrors.
func (c *Catalog) mirrors(ctx context.Context) (accounts.Set, error) {
	set, err := c.Accounts.For(ctx, accounts.Set{Calendar: c.Calendar, CRM: c.CRM})
	if err != nil {
		return accounts.Set{}, fmt.Errorf("mirror accounts: %w", err)
	}
	return set, nil
}

// Ref names a resource's calendar.
func Ref(r booking.Resource) calendars.Ref {
	return calendars.Ref{Provider: r.Provider(), ID: r.CalendarID}
}

// OpenFlags lists drift a human has to look at.
func (c *Catalog) OpenFlags(ctx context.Context) ([]booking.Flag, error) {
	flags, err := c.Store.OpenFlags(ctx)
	if err != nil {
		return nil, fmt.Errorf("open flags: %w", err)
	}
	return flags, nil
}

// ResolveFlag records an operator's resolution in the event log.
func (c *Catalog) ResolveFlag(ctx context.Context, id int64, note string) (booking.Flag, error) {
	f, err := c.Store.ResolveFlag(ctx, id, note)
	if errors.Is(err, store.ErrFlagNotOpen) {
		return booking.Flag{}, booking.Rejectf(booking.CodeFlagNotOpen, "no open drift flag %d", id)
	}
	if err != nil {
		return booking.Flag{}, fmt.Errorf("resolve flag %d: %w", id, err)
	}
	return f, nil
}

// Bookings lists bookings by start, property, agent and status, one page
// at a time.
func (c *Catalog) Bookings(ctx context.Context, q booking.ListQuery) ([]booking.Booking, error) {
	return c.Store.Bookings(ctx, q)
}

// Resource reads one resource with its rules.
func (c *Catalog) Resource(ctx context.Context, id string) (booking.Resource, error) {
	return c.Store.Resource(ctx, id)
}

// Policy reads the policy in force.
func (c *Catalog) Policy(ctx context.Context) (booking.Policy, error) {
	return c.Store.CurrentPolicy(ctx)
}

// OutsideRules lists confirmed bookings that their resources' hours or
// time off, changed since, no longer allow.
func (c *Catalog) OutsideRules(ctx context.Context) ([]booking.OutsideRules, error) {
	return c.Store.OutsideRules(ctx, 100)
}

// PutPool creates or replaces a team of agents.
func (c *Catalog) PutPool(ctx context.Context, p booking.Pool) error {
	return c.Store.PutPool(ctx, p)
}

// Pool reads a team of agents.
func (c *Catalog) Pool(ctx context.Context, id string) (booking.Pool, error) {
	return c.Store.Pool(ctx, id)
}

// PutResource creates or updates a resource; the same call twice changes
// nothing.
func (c *Catalog) PutResource(ctx context.Context, r booking.Resource) error {
	if err := c.Store.UpsertResource(ctx, r); err != nil {
		return fmt.Errorf("put resource %s: %w", r.ID, err)
	}
	return nil
}

// PutPolicy makes a policy version current; a version's content cannot
// change once written.
func (c *Catalog) PutPolicy(ctx context.Context, p booking.Policy) error {
	if err := c.Store.SetPolicy(ctx, p); err != nil {
		return fmt.Errorf("put policy %s: %w", p.Version, err)
	}
	return nil
}
