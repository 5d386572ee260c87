package voice

import (
	"context"
	"errors"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// find_booking without a reference: a returning caller is found by the
// number the platform says they call from (caller ID, never a number
// the model says) and the name they booked under. The number finds the
// contacts sealed with it (by the store's keyed digest); the name is
// compared with each contact opened. The answer names only each upcoming
// booking's time, property and reference, within the budgets a
// reference has: per key, per conversation and, for every process, per
// number.

// maxFound bounds the bookings one answer names.
const maxFound = 3

func (t *Tools) toolFindByCaller(ctx context.Context, conv string, a toolArgs) (Answer, error) {
	name := strings.TrimSpace(a.Name)
	switch {
	case a.callerNumber == "":
		return Answer{}, api.BadRequest(booking.CodeMissingField, "this call carries no caller ID: give the reference the caller quotes and the phone number they gave when booking")
	case name == "":
		return Answer{}, api.BadRequest(booking.CodeMissingField, "give the name the caller booked under, or the reference they quote and the phone number they gave")
	case t.cfg.Contacts == nil:
		return Answer{}, noContacts
	case !t.finds.allow(conv, "caller:"+a.callerNumber, t.cfg.Now()):
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
	lines, handles := make([]string, 0, len(found)), make([]string, 0, len(found))
	for _, r := range found {
		if err := t.saga.Adopt(ctx, conv, r.RequestKey); err != nil {
			return Answer{}, err
		}
		ref := receipt.Reference(r.RequestKey)
		lines = append(lines, t.cfg.Names.Speaker(a.lang, r.PropertyRef).Found(r.PropertyRef, *r.StartsAt, r.TimeZone, ref))
		handles = append(handles, ref+": request_key "+r.RequestKey)
	}
	return Answer{Status: "found", Line: strings.Join(lines, " ") + " For the tools: " + strings.Join(handles, "; ") +
		"; this call may now check, cancel or reschedule them."}, nil
}

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
		if live && r.StartsAt != nil && r.StartsAt.After(t.cfg.Now()) && !seen[r.RequestKey] {
			seen[r.RequestKey] = true
			out = append(out, r)
		}
	}
	return out, nil
}

// sameName reports whether the name a caller gives is the one they booked
// under: compared without case, accents or punctuation, the words of the
// shorter all among the longer's ("Dupont" and "Marie Dupont" match;
// "Marie" and "Marie Dupont" too, which a stranger on the caller's own
// line could say: the number is the factor, the name tells apart the
// people who share it).
func sameName(booked, given string) bool {
	a, b := nameWords(booked), nameWords(given)
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	if len(a) < len(b) {
		a, b = b, a
	}
	have := map[string]bool{}
	for _, w := range a {
		have[w] = true
	}
	for _, w := range b {
		if !have[w] {
			return false
		}
	}
	return true
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
