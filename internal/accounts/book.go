package accounts

import (
	"bytes"
	"cmp"
	"context"
	"maps"
	"sync"
	"time"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/mail"
	"github.com/bookingsaga/bookingsaga/internal/sms"
)

// Set is one agency's mirrors' clients; a nil one is a mirror that
// agency does not keep.
type Set struct {
	Calendar *calendars.Router
	CRM      *crm.Router
	SMS      *sms.Sender
	Mail     *mail.Sender
}

// Vault is where the accounts are kept; *store.Store is one. It reads
// the agency of ctx's, under row-level security.
type Vault interface {
	MirrorAccounts(ctx context.Context) (map[string][]byte, error)
}

// Book gives each agency its clients, built from the accounts it set and
// kept while they stay the same: a client's state (HubSpot's rate
// limiter, Google's and Microsoft's tokens) lives as long as its
// account. A change made in another process is seen within readFor.
type Book struct {
	Vault Vault
	// Build connects the accounts stored, none of the deployment's: a
	// kind not stored is a client not built.
	Build func(ctx context.Context, stored Stored) (Set, error)

	mu sync.Mutex
	by map[int]entry // by agency number
}

type entry struct {
	stored Stored
	set    Set
	read   time.Time
}

// readFor is how long an agency's accounts, once read, are used without
// reading them again.
const readFor = 5 * time.Second

// For is the clients ctx's agency keeps its mirrors in: those of the
// accounts it set. The default agency keeps the deployment's own (own,
// from its flags) for each mirror it set no account of; another agency
// never does, so its bookings reach no account but its own. A nil Book
// is a vault with no accounts.
func (b *Book) For(ctx context.Context, own Set) (Set, error) {
	a := agency.From(ctx)
	var set Set
	if b != nil {
		var err error
		if set, err = b.agency(ctx, a.No); err != nil {
			return Set{}, err
		}
	}
	if !a.IsDefault() {
		return set, nil
	}
	return Set{Calendar: cmp.Or(set.Calendar, own.Calendar), CRM: cmp.Or(set.CRM, own.CRM),
		SMS: cmp.Or(set.SMS, own.SMS), Mail: cmp.Or(set.Mail, own.Mail)}, nil
}

// agency is agency no's clients, built again only when its accounts
// changed.
func (b *Book) agency(ctx context.Context, no int) (Set, error) {
	now := time.Now()
	b.mu.Lock()
	e, ok := b.by[no]
	b.mu.Unlock()
	if ok && now.Sub(e.read) < readFor {
		return e.set, nil
	}
	stored, err := b.Vault.MirrorAccounts(ctx)
	if err != nil {
		return Set{}, err
	}
	if !ok || !maps.EqualFunc(e.stored, Stored(stored), bytes.Equal) {
		if e.set, err = b.Build(ctx, stored); err != nil {
			return Set{}, err
		}
		e.stored = stored
	}
	e.read = now
	b.mu.Lock()
	if b.by == nil {
		b.by = map[int]entry{}
	}
	b.by[no] = e
	b.mu.Unlock()
	return e.set, nil
}

// Forget drops what the book holds of ctx's agency: the next call reads
// its accounts again. A process calls it after writing them, so that its
// own writes are seen at once.
func (b *Book) Forget(ctx context.Context) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.by, agency.From(ctx).No)
}
