package voice

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// find_booking without a reference: a returning caller is found by the
// number the platform says they call from (caller ID, never a number
// the model says) and the name they booked under, in full. The number
// finds the contacts sealed with it (by the store's keyed digest); the
// name is compared with each contact opened. Caller ID is whatever the
// caller's carrier sends, so it finds and never unlocks: the answer names
// only each upcoming booking's time and property, adopts nothing, and
// gives no reference, within the budgets a reference has: per key, per
// conversation and, for every process, per number.

// maxFound bounds the bookings one answer names.
const maxFound = 3

func (t *Tools) toolFindByCaller(ctx context.Context, conv string, a toolArgs) (Answer, error) {
	name := strings.TrimSpace(a.Name)
	switch {
	case a.callerNumber == "":
		return Answer{}, edge.BadRequest(booking.CodeMissingField, "this call carries no caller ID: give the reference the caller quotes and the phone number they gave when booking")
	case name == "":
		return Answer{}, edge.BadRequest(booking.CodeMissingField, "give the name the caller booked under, or the reference they quote and the phone number they gave")
	case t.cfg.Contacts == nil:
		return Answer{}, noContacts
	case !t.finds.allow(agency.From(ctx).ID, conv, "caller:"+a.callerNumber, t.set.Now()):
		return tooManyFinds, nil
	}
	ref, keys, err := t.cfg.Contacts.KeysByPhone(ctx, a.callerNumber)
	if err != nil {
		return Answer{}, err
	}
	if ref != "" {
		if ok, err := t.spendShared(ctx, ref); err != nil || !ok {
			return tooManyFinds, err
		}
	}
	found, err := t.upcoming(ctx, keys, name)
	if err != nil {
		return Answer{}, err
	}
	if len(found) == 0 {
		return notDone(booking.CodeNotFound, "no upcoming booking matches the number this call comes from and that name; ask for the reference, or offer a person"), nil
	}
	if a.SendCode {
		return t.sendCode(ctx, conv, a, found)
	}
	lines := make([]string, 0, len(found))
	for _, r := range found {
		lines = append(lines, t.set.Names.Speaker(ctx, a.lang, r.PropertyRef).Found(r.PropertyRef, *r.StartsAt, r.TimeZone))
	}
	// Caller ID is whatever the caller's carrier sends: it finds, it
	// does not unlock. Nothing is adopted, and no reference or key is
	// given; changing a booking takes its reference, or a code texted to
	// the number it was booked with (findcode.go).
	return Answer{Status: "found", Line: strings.Join(lines, " ") + " " + foundOnly}, nil
}

// foundOnly tells the model what a find by caller ID allows.
const foundOnly = "Tell the caller only that and when. To cancel or move it, ask for the reference from their confirmation " +
	"and call find_booking with the reference and the phone they booked with; or, if they have that phone with them, " +
	"call find_booking with the name and send_code true, which texts them a code."

// upcoming are the bookings among keys (followed where a move took them)
// whose contact bears name and that are still to come, at most maxFound.
func (t *Tools) upcoming(ctx context.Context, keys []string, name string) ([]receipt.Receipt, error) {
	var out []receipt.Receipt
	seen := map[string]bool{}
	for _, key := range keys {
		if len(out) == maxFound {
			break
		}
		c, err := t.cfg.Contacts.Contact(ctx, key)
		switch {
		case errors.Is(err, booking.ErrContactErased) || errors.Is(err, booking.ErrNoContact):
			continue
		case err != nil:
			return nil, err // a store that can't answer is not "no booking"
		case !sameName(c.Name, name):
			continue // another caller on the same line
		}
		r, err := t.saga.Status(ctx, key)
		if errors.Is(err, booking.ErrNotFound) {
			continue
		}
		if err == nil {
			r, err = t.current(ctx, r)
		}
		if err != nil {
			return nil, err
		}
		live := r.Status == receipt.StatusConfirmed || r.Status == receipt.StatusHeld
		if live && r.StartsAt != nil && r.StartsAt.After(t.set.Now()) && !seen[r.RequestKey] {
			seen[r.RequestKey] = true
			out = append(out, r)
		}
	}
	return out, nil
}

// sameName reports whether the name a caller gives is the one they booked
// under, in full: the same words, without case, accents or punctuation,
// in any order ("Dupont Marie" is "Marie Dupont"; "Marie" is not: a
// stranger who knows a first name is not the caller).
func sameName(booked, given string) bool {
	a, b := nameWords(booked), nameWords(given)
	slices.Sort(a)
	slices.Sort(b)
	return len(a) > 0 && slices.Equal(a, b)
}

// nameWords are a name's words, folded: lower case, accents dropped.
func nameWords(name string) []string {
	var b strings.Builder
	for _, r := range norm.NFD.String(name) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(' ')
		}
	}
	return strings.Fields(b.String())
}
