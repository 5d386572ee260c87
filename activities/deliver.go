package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/accounts"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/mail"
	"github.com/bookingsaga/bookingsaga/internal/speech"
)

// unsent is how long a message waits when its channel has no sender
// configured: sent within that time of one being set up.
const unsent = time.Hour

// holdUntil reports whether a message on ch must wait, and until when:
// a text through the quiet hours in the property's zone (an e-mail waits
// in the inbox, so it goes) when quiet (booking.MessageKind.QuietHoursApply),
// any message while its channel has no sender.
func holdUntil(set accounts.Set, hours booking.QuietHours, ch booking.Channel, zone string, quiet bool) (time.Time, bool) {
	switch {
	case ch == booking.ChannelSMS && set.SMS == nil, ch == booking.ChannelEmail && set.Mail == nil:
		return time.Now().Add(unsent), true
	case ch != booking.ChannelSMS || !quiet:
		return time.Time{}, false
	}
	loc, err := localtime.LoadZone(zone)
	if err != nil {
		loc = time.UTC // the store keeps only zones it could load
	}
	return hours.Until(time.Now(), loc)
}

// deliver words m (its kind as the caller reads it: worded) in the
// caller's language and sends it on the channel they agreed to; an e-mail carries the viewing as a calendar invitation.
// A text tried before (tries > 0) may have gone already, its reply lost or
// its worker gone before the mark: Twilio takes no idempotency key, so it
// is looked for first, and sent only when Twilio has none.
func (a *Activities) deliver(ctx context.Context, set accounts.Set, m booking.Message, c booking.Contact, tries int, code string) (string, error) {
	sp, err := a.speaker(ctx, m, c)
	if err != nil {
		return "", err
	}
	if c.Notify == booking.ChannelSMS {
		body := sp.Text(m.Kind, m.Booking)
		if m.Kind == booking.MessageCode {
			body = sp.Code(code)
		}
		if tries > 0 {
			if id, found, err := set.SMS.Find(c.Phone, lookFor(sp, m, body), m.CreatedAt); err != nil || found {
				return id, err
			}
		}
		return set.SMS.Send(c.Phone, body)
	}
	out := mail.Mail{To: c.Email, Subject: sp.Subject(m.Kind, m.Booking), Text: sp.Message(m.Kind, m.Booking),
		MessageID: opaque(agency.Scoped(ctx, m.RequestKey), string(m.Kind)) + "@bookingsaga"}
	if m.Kind.Invites() {
		out.Invite = invite(agency.Scoped(ctx, m.Thread), m, sp)
	}
	return set.Mail.Send(ctx, out)
}

// lookFor is what a text tried before is found at Twilio by: its words,
// less any that may have changed since the try (the free times a
// not-booked text offers, read again on each try), which end it.
func lookFor(sp speech.Speaker, m booking.Message, body string) string {
	if len(sp.Free) == 0 {
		return body
	}
	sp.Free = nil
	other, n := sp.Text(m.Kind, m.Booking), 0
	for n < len(body) && n < len(other) && body[n] == other[n] {
		n++
	}
	return body[:n]
}

// invite is the viewing as the caller's calendar keeps it: one UID for
// the first booking and every move of it (its thread, in its agency's
// space), its sequence the number of moves, one more for a cancellation.
func invite(thread string, m booking.Message, sp speech.Speaker) *mail.Invite {
	in := &mail.Invite{UID: opaque(thread, "viewing") + "@bookingsaga", Sequence: m.Moves,
		Cancel: m.Kind == booking.MessageCancelled, Start: m.Booking.Intent.StartsAt, End: m.Booking.Intent.EndsAt,
		Zone: m.Booking.Intent.TimeZone, Summary: sp.InviteSummary(m.Booking), Details: sp.Message(m.Kind, m.Booking), Location: sp.Address,
		OrganizerName: sp.Agency, URL: sp.Link, Stamp: time.Now().UTC()}
	if in.Cancel {
		in.Sequence++
	}
	return in
}

// opaque names a message or a viewing in mail headers and invitations
// without the request key, which the agent's API takes as a capability.
func opaque(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// worded is the kind m is worded as: a move that changed only the agent
// (a reassignment) is told as that, never as a move to the same time.
func (a *Activities) worded(ctx context.Context, m booking.Message) (booking.MessageKind, error) {
	in := m.Booking.Intent
	if m.Kind == booking.MessageNotBooked && in.Replaces != "" {
		return booking.MessageMoveNotBooked, nil
	}
	if m.Kind != booking.MessageRescheduled || in.Replaces == "" {
		return m.Kind, nil
	}
	old, err := a.Store.Lookup(ctx, in.Replaces)
	switch {
	case errors.Is(err, booking.ErrNotFound):
		return m.Kind, nil
	case err != nil:
		return "", storeError("message replaced booking", m.RequestKey, err)
	case old.Intent.SameTimeAndPlace(in):
		return booking.MessageReassigned, nil
	}
	return m.Kind, nil
}

// speaker speaks the caller's language, with the property's and the
// agent's names in it.
func (a *Activities) speaker(ctx context.Context, m booking.Message, c booking.Contact) (speech.Speaker, error) {
	lang, err := speech.ParseLang(c.Lang)
	if err != nil {
		lang = speech.English
	}
	sp := speech.Speaker{Lang: lang, Names: map[string]string{}}
	if sp.Link, err = a.pageLink(ctx, m, lang); err != nil {
		return speech.Speaker{}, err
	}
	p, err := a.Store.Profile(ctx)
	if err != nil {
		return speech.Speaker{}, fmt.Errorf("message profile %s: %w", m.RequestKey, err)
	}
	sp.Agency, sp.Phone = p.Name, p.Phone
	if m.Kind == booking.MessageNotBooked {
		if sp.Free, err = a.freeInstead(ctx, m.Booking.Intent); err != nil {
			return speech.Speaker{}, fmt.Errorf("message free times %s: %w", m.RequestKey, err)
		}
	}
	for i, id := range []string{m.Booking.Intent.PropertyID, m.Booking.Intent.AgentID} {
		res, err := a.Store.Resource(ctx, id)
		var rej *booking.Rejection
		if err != nil && !errors.As(err, &rej) { // a resource gone since is "the property"
			return speech.Speaker{}, fmt.Errorf("message resource %s: %w", m.RequestKey, err)
		}
		if name := res.NameIn(string(lang)); name != "" {
			sp.Names[res.ID] = name
		}
		if i == 0 {
			sp.Address = res.AddressIn(string(lang))
		}
	}
	return sp, nil
}

// pageLink is the link to the caller's own page, in their language: ""
// when this deployment serves none (no PublicURL), for a code, for a
// booking refused (there is nothing to show), and for a contact erased
// meanwhile. A move refused links the booking that stands. The link
// lives until the viewing's end.
func (a *Activities) pageLink(ctx context.Context, m booking.Message, lang speech.Lang) (string, error) {
	key, ends := m.RequestKey, m.Booking.Intent.EndsAt
	switch {
	case a.PublicURL == "" || m.Kind == booking.MessageCode || m.Kind == booking.MessageNotBooked:
		return "", nil // nothing booked, nothing to show
	case m.Kind == booking.MessageMoveNotBooked: // the old booking stands
		old, err := a.Store.Lookup(ctx, m.Booking.Intent.Replaces)
		switch {
		case errors.Is(err, booking.ErrNotFound): // anonymised since
			return "", nil
		case err != nil:
			return "", storeError("caller link", m.RequestKey, err)
		}
		key, ends = old.RequestKey, old.Intent.EndsAt
	}
	token, err := a.Store.CallerLink(ctx, key, ends)
	switch {
	case errors.Is(err, booking.ErrNoContact), errors.Is(err, booking.ErrContactErased):
		return "", nil
	case err != nil:
		return "", storeError("caller link", m.RequestKey, err)
	}
	return agency.From(ctx).PageURL(a.PublicURL, token, string(lang)), nil
}

// freeInstead are up to three free starts for what in asked, from now to
// a week on, as the store sees them: what the agent promised the caller
// told "pending" they would hear of if it fell through. An offer, as
// every availability is.
func (a *Activities) freeInstead(ctx context.Context, in booking.Intent) ([]time.Time, error) {
	now, agent := time.Now(), in.AgentID
	if in.AgentPool != "" {
		agent = "" // any of the team, as the caller asked
	}
	av, err := a.Store.Availability(ctx, booking.AvailabilityQuery{PropertyID: in.PropertyID, AgentID: agent, AgentPool: in.AgentPool,
		ExtraResources: in.ExtraResources, From: now, To: now.Add(7 * 24 * time.Hour), Duration: in.EndsAt.Sub(in.StartsAt)})
	var rej *booking.Rejection
	if errors.As(err, &rej) { // a resource gone since, a policy changed: no times to offer
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []time.Time
	for _, s := range av.Slots {
		if len(out) < 3 && !s.StartsAt.Equal(in.StartsAt) {
			out = append(out, s.StartsAt)
		}
	}
	return out, nil
}
