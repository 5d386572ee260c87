package voice

import (
	"context"
	"crypto/sha256"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/phone"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// find_booking is how a returning caller gets their booking back in a new
// call: the reference they quote and the phone number they gave when
// booking. The phone is compared here, with the sealed contact the store
// opens for it, and never read back, logged or sent to Temporal; a wrong
// phone, an unknown reference and a booking without a phone all get the
// same answer. Found, the booking becomes this conversation's own, which
// may then cancel or reschedule it.

// Attempts a conversation, and a reference, may make: enough for a caller
// who misspeaks, too few to guess a phone number.
const (
	findBurst      = 5
	findPerCall    = 10 * time.Minute / findBurst
	findPerBooking = time.Hour / findBurst
	// An API key's own budget, over all its calls, by default: new call
	// ids (or minted conversations) must not give one key endless
	// attempts. A platform's key carries all its callers' finds, so a
	// deployment sizes it for the platform's volume
	// (Config.FindsPerKeyHour); a burst is a tenth of the hour's.
	findPerKeyBurst = 50
	findsPerKeyHour = 300
	// An agency's budget, over all its keys, is four keys'.
	findsAgencyKeys = 4
)

// finds limits attempts per API key, per conversation and per reference
// (or caller number), in this API process; the reference's count is also
// kept in the store, for every process (Config.FindBudget), which is what
// bounds guessing a phone. Its memory is bounded whatever callers send:
// an entry is a fixed-size hash of what it counts, a key past its budget
// makes no entry at all, and past maxFindEntries the least recently used
// entries go (prune), so one flooding key never locks the other keys'
// callers out.
type finds struct {
	mu sync.Mutex
	by map[[32]byte]*findLimit
	// perKeyHour is a key's attempts an hour; 0 is findsPerKeyHour.
	perKeyHour int
}

// maxFindEntries bounds the entries; an hour's idle ones are forgotten.
const maxFindEntries = 10000

type findLimit struct {
	bucket *rate.Limiter
	used   time.Time
}

// allow spends one attempt of the agency's, the key's, the
// conversation's and the reference's (canonical:
// receipt.CanonicalReference, in the agency's space); each must have one
// left.
func (f *finds) allow(agencyID, conv, ref string, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.by == nil {
		f.by = map[[32]byte]*findLimit{}
	}
	caller, _, _ := strings.Cut(conv, "/") // a conversation is scoped by its key (edge.Conversation)
	perHour, burst := findsPerKeyHour, findPerKeyBurst
	if f.perKeyHour > 0 {
		perHour, burst = f.perKeyHour, max(f.perKeyHour/10, findBurst)
	}
	a := f.limit("agency:"+agencyID, time.Hour/time.Duration(findsAgencyKeys*perHour), findsAgencyKeys*burst, now)
	k := f.limit("key:"+caller, time.Hour/time.Duration(perHour), burst, now)
	if a.TokensAt(now) < 1 || k.TokensAt(now) < 1 {
		return false // the agency's or the key's own budget: it makes no other entry
	}
	c := f.limit("conversation:"+conv, findPerCall, findBurst, now)
	r := f.limit("reference:"+agencyID+"/"+ref, findPerBooking, findBurst, now)
	if c.TokensAt(now) < 1 || r.TokensAt(now) < 1 {
		return false
	}
	return a.AllowN(now, 1) && k.AllowN(now, 1) && c.AllowN(now, 1) && r.AllowN(now, 1)
}

// limit is name's bucket, made if need be, pruning first past
// maxFindEntries.
func (f *finds) limit(name string, every time.Duration, burst int, now time.Time) *rate.Limiter {
	key := sha256.Sum256([]byte(name))
	l := f.by[key]
	if l == nil {
		if len(f.by) >= maxFindEntries {
			f.prune(now)
		}
		l = &findLimit{bucket: rate.NewLimiter(rate.Every(every), burst)}
		f.by[key] = l
	}
	l.used = now
	return l.bucket
}

// prune forgets limits idle for an hour (they are full again by then);
// with too few of those, the least recently used tenth, so that the map
// stays bounded, a flood costs only its own entries, and the sort is paid
// once every maxFindEntries/10 new entries. A reference's count
// forgotten that way is still the store's (Config.FindBudget).
func (f *finds) prune(now time.Time) {
	for key, l := range f.by {
		if now.Sub(l.used) > time.Hour {
			delete(f.by, key)
		}
	}
	if len(f.by) < maxFindEntries {
		return
	}
	keys := slices.Collect(maps.Keys(f.by))
	slices.SortFunc(keys, func(a, b [32]byte) int { return f.by[a].used.Compare(f.by[b].used) })
	for _, key := range keys[:maxFindEntries/10] {
		delete(f.by, key)
	}
}

// noContacts answers a find on an API without the store's contacts.
var noContacts = &edge.Error{Status: http.StatusNotImplemented, Code: string(booking.CodeUnavailable), Message: "this API has no store connection to check a phone number"}

// tooManyFinds answers an attempt over a budget.
var tooManyFinds = notDone(booking.CodeRateLimited, "too many attempts to find a booking in this call; offer to pass the caller to a person")

func (t *Tools) toolFind(ctx context.Context, conv string, a toolArgs) (Answer, error) {
	switch {
	case strings.TrimSpace(a.Code) != "":
		return t.toolFindByCode(ctx, conv, a)
	case strings.TrimSpace(a.Reference) == "":
		return t.toolFindByCaller(ctx, conv, a)
	}
	ref, err := receipt.CanonicalReference(a.Reference)
	switch {
	case strings.TrimSpace(a.Phone) == "":
		return Answer{}, edge.BadRequest(booking.CodeMissingField, "give the reference the caller quotes and the phone number they gave when booking")
	case err != nil:
		return Answer{}, err // not a reference: nothing is counted or looked up
	case t.cfg.Contacts == nil:
		return Answer{}, noContacts
	case !t.finds.allow(agency.From(ctx).ID, conv, ref, t.set.Now()):
		return tooManyFinds, nil
	}
	if ok, err := t.spendShared(ctx, ref); err != nil || !ok {
		return tooManyFinds, err
	}
	r, err := t.saga.ByReference(ctx, ref)
	switch {
	case errors.Is(err, booking.ErrNotFound) || err == nil && !t.phoneMatches(ctx, r.RequestKey, r.TimeZone, a.Phone):
		return notDone(booking.CodeNotFound, "no booking matches that reference and phone number; ask the caller to check both, or offer a person"), nil
	case err != nil:
		return Answer{}, err
	}
	return t.adopt(ctx, conv, a, r)
}

// adopt makes r (or where a move took it since) this conversation's own,
// which may then check, cancel or reschedule it.
func (t *Tools) adopt(ctx context.Context, conv string, a toolArgs, r receipt.Receipt) (Answer, error) {
	r, err := t.current(ctx, r)
	if err != nil {
		return Answer{}, err
	}
	if err := t.saga.Adopt(ctx, conv, r.RequestKey); err != nil {
		return Answer{}, err
	}
	return t.spoken(ctx, a.lang, r).note("For the tools: request_key " + r.RequestKey + "; this call may now check, cancel or reschedule it."), nil
}

// spendShared spends one of what a reference (or a caller's number) may
// try, counted for every API process (the store); this process's own
// count (finds) only turns the cheap refusals away first.
func (t *Tools) spendShared(ctx context.Context, ref string) (bool, error) {
	if t.cfg.FindBudget == nil {
		return true, nil
	}
	return t.cfg.FindBudget.SpendFindAttempt(ctx, ref, findBurst, findBurst*findPerBooking)
}

// current is r, or where a move took it since.
func (t *Tools) current(ctx context.Context, r receipt.Receipt) (receipt.Receipt, error) {
	var err error
	for hops := 0; moved(r) && hops < 10; hops++ {
		if r, err = t.saga.Status(ctx, r.ReplacedBy); err != nil {
			return receipt.Receipt{}, err
		}
	}
	return r, nil
}

// phoneMatches compares a phone number with the one sealed with key's
// booking, both read as written in the property's country (zone). A
// store that cannot open it (erased, none given) matches nothing.
func (t *Tools) phoneMatches(ctx context.Context, key, zone, number string) bool {
	c, err := t.cfg.Contacts.Contact(ctx, key)
	return err == nil && phone.Same(c.Phone, number, zone)
}
