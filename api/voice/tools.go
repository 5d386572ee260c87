package voice

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/speech"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// toolArgs are the arguments every tool may take; each tool reads its own.
type toolArgs struct {
	edge.Slot
	RequestKey string `json:"request_key,omitempty"`
	// Reference is what the caller quotes back (BS-XXXX-XXXX), for
	// booking_status when the key is not at hand.
	Reference             string        `json:"reference,omitempty"`
	ExpectedPolicyVersion string        `json:"expected_policy_version,omitempty"`
	Contact               *edge.Contact `json:"contact,omitempty"`
	// Hold, with select_slot, holds the slot until book (or the hold's
	// expiry); it needs expected_policy_version.
	Hold bool `json:"hold,omitempty"`
	// From and To bound check_availability; Date (YYYY-MM-DD, local) is
	// the simpler alternative a model tends to produce.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	Date string `json:"date,omitempty"`
	// Language picks the spoken lines' language (en, fr, zh); the default is
	// the API's.
	Language string `json:"language,omitempty"`
	// Topic is property_info's question, or request_human's kind of
	// question; Reason is request_human's, in the caller's words.
	Topic  string `json:"topic,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Phone, with find_booking, is the number the caller gave when booking;
	// Name, without a reference, the name they booked under.
	Phone string `json:"phone,omitempty"`
	Name  string `json:"name,omitempty"`
	// SendCode, with find_booking by caller ID, texts a one-time code to
	// the number the booking was made with; Code is that code read back.
	SendCode bool   `json:"send_code,omitempty"`
	Code     string `json:"code,omitempty"`
	// CallbackNumber and CallbackWindow, with request_human, are where and
	// when a person calls the caller back; the number defaults to caller ID.
	CallbackNumber string `json:"callback_number,omitempty"`
	CallbackWindow string `json:"callback_window,omitempty"`
	// ConversationID names the call on MCP when no X-Call-Id header does.
	ConversationID string `json:"conversation_id,omitempty"`
	lang           speech.Lang
	// callerNumber is caller ID as the platform gave it, in E.164: never
	// an argument (a model can say any number).
	callerNumber string
}

// toolSelect records the caller's choice in the conversation, holding
// the slot when asked: a hold is a booking in the making, so until its
// outcome is known it holds the conversation, as a book does.
func (t *Tools) toolSelect(ctx context.Context, conv string, a toolArgs) (Answer, error) {
	if a.Hold {
		ans, err := t.toolHold(ctx, conv, a)
		return offerCallerID(ans, a), err
	}
	in, e := a.Slot.Intent(t.set.Now())
	if e != nil {
		return Answer{}, e
	}
	key, err := t.saga.Pick(ctx, conv, in)
	if err != nil {
		return Answer{}, err
	}
	return offerCallerID(Answer{Status: "selected", Line: t.set.Names.Speaker(ctx, a.lang, in.PropertyID).Readback(in.PropertyID, in.StartsAt, in.TimeZone) +
		" For the tools: request_key " + key + ".", RequestKey: key}, a), nil
}

// offerCallerID tells the model, once the caller has chosen, the number
// they call from, for book's contact: the caller confirms it, since a
// shared or withheld line is not theirs to be texted on.
func offerCallerID(ans Answer, a toolArgs) Answer {
	if a.callerNumber == "" || ans.Failed() || ans.Status == string(receipt.StatusConflict) || ans.Status == string(receipt.StatusRejected) {
		return ans
	}
	return ans.note("The caller is calling from " + a.callerNumber + ": offer it as the contact phone for book, and use it only if they agree.")
}

// sending is call for req, under the key the conversation gives it.
func sending(req booking.CommitRequest, call func(ctx context.Context, key string, req booking.CommitRequest) (receipt.Receipt, error)) func(context.Context, string) (receipt.Receipt, error) {
	return func(ctx context.Context, key string) (receipt.Receipt, error) { return call(ctx, key, req) }
}

// toolHold holds the chosen slot until book confirms it.
func (t *Tools) toolHold(ctx context.Context, conv string, a toolArgs) (Answer, error) {
	req, e := edge.NewCommit(a.Slot, a.ExpectedPolicyVersion, nil, t.set.Now())
	if e != nil {
		return Answer{}, e
	}
	key, r, err := t.saga.BookIn(ctx, conv, req.Intent, sending(req, t.saga.Hold))
	if err != nil {
		return Answer{}, err
	}
	return t.spoken(ctx, a.lang, r).note("request_key " + key + "."), nil
}

// toolStatus reads a booking of this conversation, by its key or by the
// reference the caller quotes (which reads and changes nothing). A
// reference this call did not make or find is answered as one that names
// nothing, so that booking_status neither reads another caller's booking
// nor tells which references exist (L6): find_booking, with the phone it
// was booked with, is the way in.
func (t *Tools) toolStatus(ctx context.Context, conv string, a toolArgs) (Answer, error) {
	if a.RequestKey == "" && a.Reference != "" {
		r, err := t.saga.ByReference(ctx, a.Reference)
		switch {
		case errors.Is(err, booking.ErrNotFound):
			return notOurs, nil
		case err != nil:
			return Answer{}, err
		}
		made, err := t.saga.Made(ctx, conv, r.RequestKey)
		switch {
		case err != nil:
			return Answer{}, err
		case !made:
			return notOurs, nil
		}
		return t.spoken(ctx, a.lang, r), nil
	}
	if err := t.ours(ctx, conv, a.RequestKey); err != nil {
		return Answer{}, err
	}
	r, err := t.saga.Status(ctx, a.RequestKey)
	if errors.Is(err, booking.ErrNotFound) {
		// Nothing anywhere under the key, asked after its call: it will
		// not hold the conversation any longer.
		t.saga.Forget(ctx, conv, a.RequestKey)
	}
	if err != nil {
		return Answer{}, err
	}
	edge.Reconfirmed(ctx, t.set.Bookings, &r)
	out := t.spoken(ctx, a.lang, r)
	if r.ReconfirmedAt != nil {
		out = out.note(t.set.Names.Speaker(ctx, a.lang).Reconfirmed())
	}
	if moved(r) {
		// Not for the caller's ears: the key the model follows the move by.
		out = out.note("For the tools: the new booking's request_key is " + r.ReplacedBy + ".")
	}
	return out, nil
}

// notOurs answers booking_status for a reference this call has no
// booking under.
var notOurs = notDone(booking.CodeNotFound, "this call has no booking under that reference; "+
	"find it with find_booking, giving the reference and the phone the caller booked with")

func (t *Tools) toolCancel(ctx context.Context, conv string, a toolArgs) (Answer, error) {
	if err := t.ours(ctx, conv, a.RequestKey); err != nil {
		return Answer{}, err
	}
	r, err := t.saga.Cancel(ctx, a.RequestKey)
	if err != nil {
		return Answer{}, err
	}
	if r.Status == receipt.StatusCancelled {
		// Choosing the same slot again later is a new booking.
		t.saga.Forget(ctx, conv, a.RequestKey)
	}
	return t.spoken(ctx, a.lang, r), nil
}

// toolBook resolves the key through the intent rule, so a tool call the
// model re-issues (with a new tool-call id) lands on the same booking.
func (t *Tools) toolBook(ctx context.Context, conv string, a toolArgs) (Answer, error) {
	if a.ExpectedPolicyVersion == "" {
		return Answer{}, edge.BadRequest(booking.CodeMissingField, "expected_policy_version is required: use the one check_availability gave")
	}
	if a.Contact != nil && a.Contact.Language == "" {
		a.Contact.Language = string(a.lang) // the caller's messages are in the call's language
	}
	req, e := edge.NewCommit(a.Slot, a.ExpectedPolicyVersion, a.Contact, t.set.Now())
	if e != nil {
		return Answer{}, e
	}
	edge.AskedBy(ctx, &req)
	_, r, err := t.saga.BookIn(ctx, conv, req.Intent, sending(req, t.saga.Commit))
	if err != nil {
		return Answer{}, err
	}
	return t.spoken(ctx, a.lang, r), nil
}

func (t *Tools) toolReschedule(ctx context.Context, conv string, a toolArgs) (Answer, error) {
	if err := t.ours(ctx, conv, a.RequestKey); err != nil {
		return Answer{}, err
	}
	body := edge.RescheduleBody{Slot: a.Slot, ExpectedPolicyVersion: a.ExpectedPolicyVersion}
	if err := edge.DefaultMove(ctx, t.set.Bookings, a.RequestKey, &body); err != nil {
		return Answer{}, err
	}
	req, e := edge.NewCommit(body.Slot, body.ExpectedPolicyVersion, nil, t.set.Now())
	if e != nil {
		return Answer{}, e
	}
	_, r, err := t.saga.BookIn(ctx, conv, req.Intent, func(ctx context.Context, key string) (receipt.Receipt, error) {
		return t.saga.Reschedule(ctx, a.RequestKey, key, req)
	})
	if err != nil {
		return Answer{}, err
	}
	return t.spoken(ctx, a.lang, r), nil
}

// ours refuses a key this conversation did not make: a voice tool acts
// only on its own call's bookings, whatever key a model or a caller says.
func (t *Tools) ours(ctx context.Context, conv, key string) error {
	if err := booking.ValidateKey(key); err != nil {
		return edge.FromRejection(err)
	}
	made, err := t.saga.Made(ctx, conv, key)
	if err != nil {
		return err
	}
	if !made {
		return edge.BadRequest(booking.CodeNotThisConversation, "request_key %s was not made in this conversation; a caller's earlier booking is found by its reference", key)
	}
	return nil
}

func (t *Tools) toolAvailability(ctx context.Context, _ string, a toolArgs) (Answer, error) {
	q := booking.AvailabilityQuery{PropertyID: a.PropertyID, AgentID: a.AgentID, AgentPool: a.AgentPool, ExtraResources: a.ExtraResources,
		Duration: time.Duration(a.DurationMinutes) * time.Minute}
	if q.AgentID == edge.AnyAgent && q.AgentPool != "" {
		q.AgentID = ""
	}
	var err error
	switch {
	case a.Date != "":
		q.From, q.To, err = localDay(a.Date, a.TimeZone)
	default:
		q.From, err = time.Parse(time.RFC3339, a.From)
		if err == nil {
			q.To, err = time.Parse(time.RFC3339, a.To)
		}
	}
	if err != nil {
		return Answer{}, edge.BadRequest(booking.CodeInvalidTime, "give date (YYYY-MM-DD with time_zone) or from and to (RFC 3339)")
	}
	av, err := t.set.Catalogue.Availability(ctx, q)
	if err != nil {
		return Answer{}, err
	}
	ans := edge.AvailabilityOf(av)
	if len(av.Slots) == 0 {
		return Answer{Status: "offered", Line: fmt.Sprintf("No free time then (policy %s). Offer another day.", av.PolicyVersion), Availability: &ans}, nil
	}
	var times []string
	for i, sl := range av.Slots {
		if i == 8 {
			times = append(times, fmt.Sprintf("and %d more", len(av.Slots)-8))
			break
		}
		times = append(times, sl.LocalStart)
	}
	return Answer{Status: "offered", Line: fmt.Sprintf("Free: %s. Pass expected_policy_version %s when booking.", strings.Join(times, "; "), av.PolicyVersion),
		Availability: &ans}, nil
}

func localDay(date, zone string) (time.Time, time.Time, error) {
	loc, err := localtime.LoadZone(zone)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	d, err := time.ParseInLocation("2006-01-02", date, loc)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	return d, d.AddDate(0, 0, 1), nil
}

// moved reports a receipt whose booking lives on under another key: a
// move, or a reassignment.
func moved(r receipt.Receipt) bool {
	return (r.Status == receipt.StatusRescheduled || r.Status == receipt.StatusReassigned) && r.ReplacedBy != ""
}
