package api

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/speech"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
)

// toolArgs are the arguments every tool may take; each tool reads its own.
type toolArgs struct {
	Slot
	RequestKey string `json:"request_key,omitempty"`
	// Reference is what the caller quotes back (BS-XXXX-XXXX), for
	// booking_status when the key is not at hand.
	Reference             string   `json:"reference,omitempty"`
	ExpectedPolicyVersion string   `json:"expected_policy_version,omitempty"`
	Contact               *Contact `json:"contact,omitempty"`
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
	// Phone, with find_booking, is the number the caller gave when booking.
	Phone string `json:"phone,omitempty"`
	// ConversationID names the call on MCP when no X-Call-Id header does.
	ConversationID string `json:"conversation_id,omitempty"`
	lang           speech.Lang
}

// toolSelect records the caller's choice in the conversation, holding
// the slot when asked.
func (s *Server) toolSelect(ctx context.Context, conv string, a toolArgs) (toolAnswer, error) {
	in, e := a.Slot.Intent(s.cfg.Now())
	if e != nil {
		return toolAnswer{}, e
	}
	// A hold is a booking in the making: until its outcome is known it
	// holds the conversation, as a book does.
	ch, err := s.client.Choose(ctx, conv, in, a.Hold)
	if err != nil {
		return toolAnswer{}, err
	}
	if out, held, err := s.held(ctx, conv, a.lang, ch.Outstanding); err != nil || held {
		return out, err
	}
	if a.Hold {
		return s.toolHold(ctx, conv, ch.RequestKey, a)
	}
	return toolAnswer{Text: "[selected] " + s.speaker(ctx, a.lang, in.PropertyID).Readback(in.PropertyID, in.StartsAt, in.TimeZone) +
		" For the tools: request_key " + ch.RequestKey + ".", RequestKey: ch.RequestKey}, nil
}

// toolStatus reads a booking of this conversation, or one the caller
// quotes by its reference (which reads and changes nothing).
func (s *Server) toolStatus(ctx context.Context, conv string, a toolArgs) (toolAnswer, error) {
	if a.RequestKey == "" && a.Reference != "" {
		r, err := s.client.ByReference(ctx, a.Reference)
		return s.spoken(ctx, a.lang, r), err
	}
	if err := s.ours(ctx, conv, a.RequestKey); err != nil {
		return toolAnswer{}, err
	}
	r, err := s.client.Status(ctx, a.RequestKey)
	if errors.Is(err, sagaclient.ErrNotFound) {
		// Nothing anywhere under the key, asked after its call: it will
		// not hold the conversation any longer.
		s.tell(ctx, conv, a.RequestKey, s.client.Retire)
	}
	out := s.spoken(ctx, a.lang, r)
	if r.Status == receipt.StatusRescheduled && r.ReplacedBy != "" {
		// Not for the caller's ears: the key the model follows the move by.
		out.Text += " For the tools: the new booking's request_key is " + r.ReplacedBy + "."
	}
	return out, err
}

func (s *Server) toolCancel(ctx context.Context, conv string, a toolArgs) (toolAnswer, error) {
	if err := s.ours(ctx, conv, a.RequestKey); err != nil {
		return toolAnswer{}, err
	}
	r, err := s.client.Cancel(ctx, a.RequestKey)
	if err == nil && r.Status == receipt.StatusCancelled {
		// Choosing the same slot again later is a new booking.
		s.tell(ctx, conv, a.RequestKey, s.client.Retire)
	}
	return s.spoken(ctx, a.lang, r), err
}

// toolBook resolves the key through the intent rule, so a tool call the
// model re-issues (with a new tool-call id) lands on the same booking.
func (s *Server) toolBook(ctx context.Context, conv string, a toolArgs) (toolAnswer, error) {
	if a.ExpectedPolicyVersion == "" {
		return toolAnswer{}, badRequest(booking.CodeMissingField, "expected_policy_version is required: use the one check_availability gave")
	}
	req, e := commitRequest(a.Slot, a.ExpectedPolicyVersion, a.Contact, s.cfg.Now())
	if e != nil {
		return toolAnswer{}, e
	}
	ch, err := s.client.Choose(ctx, conv, req.Intent, true)
	if err != nil {
		return toolAnswer{}, err
	}
	if out, held, err := s.held(ctx, conv, a.lang, ch.Outstanding); err != nil || held {
		return out, err
	}
	r, err := s.client.Commit(ctx, ch.RequestKey, req)
	s.settle(ctx, conv, ch.RequestKey, r, err)
	return s.spoken(ctx, a.lang, r), err
}

// tell updates the conversation's bookkeeping about a key once its booking
// call is answered. A failure is logged, never spoken: the caller hears
// what happened to the booking, and the conversation's next choice
// re-reads an unsettled key anyway.
func (s *Server) tell(ctx context.Context, conv, key string, update func(context.Context, string, string) error) {
	if err := update(ctx, conv, key); err != nil {
		s.cfg.Log.Warn("conversation not told how its booking came out", zap.String("request_key", key), zap.Error(err))
	}
}

// toolHold holds the chosen slot until book confirms it.
func (s *Server) toolHold(ctx context.Context, conv, key string, a toolArgs) (toolAnswer, error) {
	req, e := commitRequest(a.Slot, a.ExpectedPolicyVersion, nil, s.cfg.Now())
	if e != nil {
		return toolAnswer{}, e
	}
	r, err := s.client.Hold(ctx, key, req)
	s.settle(ctx, conv, key, r, err)
	out := s.spoken(ctx, a.lang, r)
	out.Text += " request_key " + key + "."
	return out, err
}

// settle tells the conversation how a booking call under key came out:
// pending, it stays open and holds the conversation; ended unkept, the
// key is retired, so the same choice again (a slot that freed up, a
// refreshed policy) does not meet this outcome; otherwise (decided, or
// nothing sent) it no longer holds the conversation.
func (s *Server) settle(ctx context.Context, conv, key string, r receipt.Receipt, err error) {
	switch {
	case err == nil && r.Status == receipt.StatusPending:
	case err == nil && final(r):
		s.tell(ctx, conv, key, s.client.Retire)
	default:
		s.tell(ctx, conv, key, s.client.Settle)
	}
}

// held answers a call that would start another booking while one of this
// conversation's is still pending: the article's rule is that a pending
// outcome holds the conversation until it is settled.
func (s *Server) held(ctx context.Context, conv string, lang speech.Lang, outstanding []string) (toolAnswer, bool, error) {
	r, err := s.pendingEarlier(ctx, conv, outstanding)
	if err != nil || r == nil {
		return toolAnswer{}, false, err
	}
	out := s.spoken(ctx, lang, *r)
	out.Text += " An earlier booking in this call is not settled: check it with booking_status (request_key " +
		r.RequestKey + ") before booking anything else."
	return out, true, nil
}

// pendingEarlier is the rule every entry point that starts a booking (a
// book, a hold, a reschedule, an intent) keeps: the receipt of an earlier
// booking of the conversation still pending, which it must wait for; nil
// when there is none.
func (s *Server) pendingEarlier(ctx context.Context, conv string, outstanding []string) (*receipt.Receipt, error) {
	if len(outstanding) == 0 {
		return nil, nil
	}
	return s.client.Pending(ctx, conv, outstanding)
}

// final reports a receipt whose key can never book: a conflict, or a
// refusal that retrying cannot change.
func final(r receipt.Receipt) bool {
	return r.Status == receipt.StatusConflict || r.Status == receipt.StatusRejected && (r.Reason == nil || !r.Reason.Retryable)
}

func (s *Server) toolReschedule(ctx context.Context, conv string, a toolArgs) (toolAnswer, error) {
	if err := s.ours(ctx, conv, a.RequestKey); err != nil {
		return toolAnswer{}, err
	}
	body := RescheduleBody{Slot: a.Slot, ExpectedPolicyVersion: a.ExpectedPolicyVersion}
	if err := s.defaultMove(ctx, a.RequestKey, &body); err != nil {
		return toolAnswer{}, err
	}
	req, e := commitRequest(body.Slot, body.ExpectedPolicyVersion, nil, s.cfg.Now())
	if e != nil {
		return toolAnswer{}, e
	}
	ch, err := s.client.Choose(ctx, conv, req.Intent, true)
	if err != nil {
		return toolAnswer{}, err
	}
	if out, held, err := s.held(ctx, conv, a.lang, ch.Outstanding); err != nil || held {
		return out, err
	}
	r, err := s.client.Reschedule(ctx, a.RequestKey, ch.RequestKey, req)
	s.settle(ctx, conv, ch.RequestKey, r, err)
	return s.spoken(ctx, a.lang, r), err
}

// ours refuses a key this conversation did not make: a voice tool acts
// only on its own call's bookings, whatever key a model or a caller says.
func (s *Server) ours(ctx context.Context, conv, key string) error {
	if err := booking.ValidateKey(key); err != nil {
		return fromRejection(err)
	}
	made, err := s.client.Made(ctx, conv, key)
	if err != nil {
		return err
	}
	if !made {
		return badRequest(codeNotThisConversation, "request_key %s was not made in this conversation; a caller's earlier booking is found by its reference", key)
	}
	return nil
}

func (s *Server) toolAvailability(ctx context.Context, _ string, a toolArgs) (toolAnswer, error) {
	q := booking.AvailabilityQuery{PropertyID: a.PropertyID, AgentID: a.AgentID, AgentPool: a.AgentPool, ExtraResources: a.ExtraResources,
		Duration: time.Duration(a.DurationMinutes) * time.Minute}
	if q.AgentID == anyAgent && q.AgentPool != "" {
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
		return toolAnswer{}, badRequest(codeInvalidTime, "give date (YYYY-MM-DD with time_zone) or from and to (RFC 3339)")
	}
	av, err := s.client.Availability(ctx, q)
	if err != nil {
		return toolAnswer{}, err
	}
	ans := availabilityAnswer(av)
	if len(av.Slots) == 0 {
		return toolAnswer{Text: fmt.Sprintf("[offered] No free time then (policy %s). Offer another day.", av.PolicyVersion), Availability: &ans}, nil
	}
	var times []string
	for i, sl := range av.Slots {
		if i == 8 {
			times = append(times, fmt.Sprintf("and %d more", len(av.Slots)-8))
			break
		}
		times = append(times, sl.LocalStart)
	}
	return toolAnswer{Text: fmt.Sprintf("[offered] Free: %s. Pass expected_policy_version %s when booking.", strings.Join(times, "; "), av.PolicyVersion),
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

// toolError words a failure for the model, never as a success, behind
// the [not_done: code] tag the system prompt keys on.
func toolError(err error) string {
	var e *Error
	var rej *booking.Rejection
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &e):
		return notDone(e.Code, e.Message)
	case errors.As(err, &rej):
		return notDone(string(rej.Code), rej.Message)
	case errors.As(err, &nf) || errors.Is(err, sagaclient.ErrNotFound):
		return notDone(string(codeNotFound), "there is no booking under this request_key")
	}
	return notDone(string(codeUnavailable), "a temporary problem. Try the same call again in a moment")
}

func notDone(code, msg string) string {
	return "[not_done: " + code + "] NOT done: " + strings.TrimSuffix(msg, ".") + "."
}

// language is the spoken lines' language for a call: its own, or the
// API's default.
func (s *Server) language(tag string) (speech.Lang, error) {
	if tag == "" {
		return s.cfg.Language, nil
	}
	return speech.ParseLang(tag)
}

// speaker words lines in lang with the display names of ids, never
// waiting long for them (see names).
func (s *Server) speaker(ctx context.Context, lang speech.Lang, ids ...string) speech.Speaker {
	return speech.Speaker{Lang: lang, Names: s.names.lookup(ctx, ids)}
}

// say is the line for r, with its resources' display names.
func (s *Server) say(ctx context.Context, lang speech.Lang, r receipt.Receipt) string {
	return s.speaker(ctx, lang, r.PropertyRef, r.AgentRef).Receipt(r)
}

// spoken is result with the receipt it speaks of, its line filled in.
func (s *Server) spoken(ctx context.Context, lang speech.Lang, r receipt.Receipt) toolAnswer {
	text := s.result(ctx, lang, r)
	r.Spoken = text[strings.Index(text, "] ")+2:]
	return toolAnswer{Text: text, Receipt: &r}
}

// result is what a tool answers the model for r: its status, and a
// refusal's code, in brackets the system prompt keys on whatever the
// language ("[confirmed] …", "[rejected: outside_bookable_hours] …"),
// then the line to speak.
func (s *Server) result(ctx context.Context, lang speech.Lang, r receipt.Receipt) string {
	s.notePending(ctx, r)
	tag := string(r.Status)
	if r.Reason != nil && r.Reason.Code != "" && (r.Status == receipt.StatusRejected || r.Status == receipt.StatusConflict) {
		tag += ": " + r.Reason.Code
	}
	return "[" + tag + "] " + s.say(ctx, lang, r)
}
