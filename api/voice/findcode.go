package voice

import (
	"context"
	"errors"
	"strings"
	"unicode"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// A booking found by caller ID is unlocked by a one-time code texted to
// the number it was booked with: possession of that phone, which a
// spoofed caller ID is not. The store derives the code and counts its
// tries (store.UnlockCodeTTL, store.UnlockCodeTries); the worker sends
// it, as the API holds no SMS credentials. Asking for a code is a find by
// caller ID, and checking one is a find, each spending the budgets a
// guess spends.

// sendCode texts a code for the booking among found the caller means: the
// only one, or the one starting at a.LocalStart.
func (t *Tools) sendCode(ctx context.Context, conv string, a toolArgs, found []receipt.Receipt) (Answer, error) {
	r, ok := chosen(found, strings.TrimSpace(a.LocalStart))
	if !ok {
		return notDone(booking.CodeMissingField, "several viewings were found: give local_start (YYYY-MM-DDTHH:MM) of the one the caller means, with send_code"), nil
	}
	sent, err := t.cfg.Contacts.IssueUnlockCode(ctx, conv, r.RequestKey)
	if err != nil {
		return Answer{}, err
	}
	line := "A code was texted to the number this viewing was booked with; it lasts 5 minutes."
	if !sent {
		line = "A code was already texted to the number this viewing was booked with, and it still stands."
	}
	return Answer{Status: "code_sent", Line: line + " Ask the caller to read it out, then call find_booking with code."}, nil
}

// chosen is the booking among found starting at local (wall time in its
// zone), or the only one when local is "".
func chosen(found []receipt.Receipt, local string) (receipt.Receipt, bool) {
	if local == "" {
		return found[0], len(found) == 1
	}
	for _, r := range found {
		if loc, err := localtime.LoadZone(r.TimeZone); err == nil && r.StartsAt.In(loc).Format("2006-01-02T15:04") == local {
			return r, true
		}
	}
	return receipt.Receipt{}, false
}

// toolFindByCode unlocks the booking a code was texted for, in the
// conversation it was asked in.
func (t *Tools) toolFindByCode(ctx context.Context, conv string, a toolArgs) (Answer, error) {
	code := strings.Map(func(r rune) rune {
		if unicode.IsDigit(r) {
			return r
		}
		return -1 // "123 456", "1-2-3-4-5-6" as a model writes what it heard
	}, a.Code)
	switch {
	case t.cfg.Contacts == nil:
		return Answer{}, noContacts
	case !t.finds.allow(agency.From(ctx).ID, conv, "code:"+conv, t.set.Now()):
		return tooManyFinds, nil
	}
	key, err := t.cfg.Contacts.UseUnlockCode(ctx, conv, code)
	if err != nil {
		return Answer{}, err
	}
	if key == "" {
		return notDone(booking.CodeNotFound, "that is not the code texted in this call, or it has expired or was used; "+
			"ask the caller to read it again, or for their reference"), nil
	}
	r, err := t.saga.Status(ctx, key)
	if errors.Is(err, booking.ErrNotFound) {
		return notDone(booking.CodeNotFound, "the booking this code was for is gone"), nil
	}
	if err != nil {
		return Answer{}, err
	}
	return t.adopt(ctx, conv, a, r)
}
