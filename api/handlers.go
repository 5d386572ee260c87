package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
)

// isInputCode reports refusals that mean the request itself was malformed
// or named something that does not exist: HTTP 400, nothing written.
func isInputCode(code string) bool {
	switch booking.Code(code) {
	case booking.CodeInvalidRequestKey, booking.CodeMissingField, booking.CodeInvalidTimeRange,
		booking.CodeUnknownTimeZone, booking.CodeTimeZoneMismatch, booking.CodeDuplicateResource,
		booking.CodeTooManyResources, booking.CodeUnknownResource, booking.CodeWrongResourceKind,
		booking.CodeStartsInPast, booking.CodeInvalidResource, booking.CodeInvalidPolicy,
		booking.CodeInvalidWindow, booking.CodeInvalidReplacement, booking.CodeInvalidReference,
		booking.CodeInvalidHours, booking.CodeInvalidOverride, booking.CodeInvalidLimit, booking.CodeEmptyPool, booking.CodeUnknownPool:
		return true
	}
	return false
}

// writeError answers err: API errors and store refusals with their codes,
// a missing booking with 404, anything else as a retryable 503.
func writeError(w http.ResponseWriter, log *zap.Logger, err error) {
	var e *Error
	var rej *booking.Rejection
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &e):
	case errors.As(err, &rej):
		e = badRequest(rej.Code, "%s", rej.Message)
		if !isInputCode(string(rej.Code)) {
			e.Status = http.StatusConflict
		}
	case errors.As(err, &nf) || errors.Is(err, sagaclient.ErrNotFound):
		e = &Error{Status: http.StatusNotFound, Code: string(codeNotFound), Message: "no booking under this request_key"}
	default:
		log.Error("request failed", zap.Error(err))
		e = &Error{Status: http.StatusServiceUnavailable, Code: string(codeUnavailable),
			Message: "bookingsaga could not answer now; retry with the same request_key"}
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", retryAfter(e.RetryAfter))
	}
	if e.Status >= 500 || e.Status == http.StatusTooManyRequests {
		e.Retryable = true
	}
	_ = writeJSON(w, e.Status, e)
}

// technical reports whether err is a failure of the system rather than an
// answer about the request: no refusal, no missing booking, no API error.
func technical(err error) bool {
	var e *Error
	var rej *booking.Rejection
	var nf *serviceerror.NotFound
	return !errors.As(err, &e) && !errors.As(err, &rej) && !errors.As(err, &nf) && !errors.Is(err, sagaclient.ErrNotFound)
}

// answer writes the receipt of a booking call. The client answers a fault
// after the request may have reached Temporal as pending_reconciliation;
// what is left is a failure before anything was sent, so it is still a
// receipt, "rejected" with retryable set: the agent tries again with the
// same request_key, and never hears "booked".
func (s *Server) answer(w http.ResponseWriter, r *http.Request, key string, rec receipt.Receipt, err error) error {
	if err == nil {
		return s.writeReceipt(w, r, rec)
	}
	if !technical(err) {
		return err
	}
	msg := "bookingsaga could not answer now; nothing is confirmed; retry with the same request_key"
	if errors.Is(err, sagaclient.ErrOverloaded) {
		// Shed by design, not a failure: counted, not logged as an error.
		msg = "bookingsaga is at capacity: this call was not sent and nothing is confirmed; send the same call again in a moment"
		w.Header().Set("Retry-After", "1")
		s.shed()
	} else {
		logger(r).Error("booking call failed", zap.String("request_key", key), zap.Error(err))
	}
	rec = s.present(r, receipt.Receipt{RequestKey: key, Status: receipt.StatusRejected,
		Reason: &receipt.Reason{Code: string(codeUnavailable), Retryable: true, Message: msg}})
	return writeJSON(w, http.StatusServiceUnavailable, unavailableReceipt{
		Error: Error{Code: string(codeUnavailable), Message: msg, Retryable: true}, Receipt: rec})
}

// shed counts a booking call not sent because too many are in flight.
func (s *Server) shed() { s.cfg.Metrics.Counter("booking_calls_shed_total").Inc(1) }

// unavailableReceipt is a booking call's 503: an error like every other
// ({code, message, retryable}) that is also the key's receipt, "rejected"
// and retryable, for an agent that words its reply from status.
type unavailableReceipt struct {
	Error
	receipt.Receipt
}

// writeReceipt answers with a receipt. A refusal caused by the request
// (an unknown resource, say) is a 400 and a key reused for another intent
// a 409; every other outcome, conflict included, is a 200 whose status
// says what happened.
func (s *Server) writeReceipt(w http.ResponseWriter, req *http.Request, r receipt.Receipt) error {
	r = s.present(req, r)
	if r.Status == receipt.StatusRejected && r.Reason != nil {
		switch {
		case isInputCode(r.Reason.Code):
			return writeJSON(w, http.StatusBadRequest, &Error{Code: r.Reason.Code, Message: r.Reason.Message})
		case r.Reason.Code == string(booking.CodeRequestKeyReused):
			return writeJSON(w, http.StatusConflict, &Error{Code: r.Reason.Code, Message: r.Reason.Message})
		}
	}
	return writeJSON(w, http.StatusOK, r)
}

func (s *Server) availability(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	from, err1 := time.Parse(time.RFC3339, q.Get("from"))
	to, err2 := time.Parse(time.RFC3339, q.Get("to"))
	agent, pool := q.Get("agent_id"), q.Get("agent_pool")
	if agent == anyAgent && pool != "" {
		agent = ""
	}
	if q.Get("property_id") == "" || agent == "" && pool == "" {
		return badRequest(booking.CodeMissingField, "property_id, and agent_id or agent_pool, are required")
	}
	if err1 != nil || err2 != nil {
		return badRequest(codeInvalidTime, "from and to must be RFC 3339 with an offset")
	}
	aq := booking.AvailabilityQuery{PropertyID: q.Get("property_id"), AgentID: agent, AgentPool: pool, From: from, To: to}
	if v := q.Get("extra_resources"); v != "" {
		aq.ExtraResources = strings.Split(v, ",")
	}
	if v := q.Get("duration_minutes"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return badRequest(booking.CodeInvalidWindow, "duration_minutes must be a positive number")
		}
		aq.Duration = time.Duration(n) * time.Minute
	}
	av, err := s.client.Availability(r.Context(), aq)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, availabilityAnswer(av))
}

func (s *Server) intents(w http.ResponseWriter, r *http.Request) error {
	var body IntentBody
	if e := decode(r.Body, s.cfg.MaxBody, &body); e != nil {
		return e
	}
	if body.ConversationID == "" {
		return badRequest(booking.CodeMissingField, "conversation_id is required")
	}
	if !body.Hold {
		in, e := body.Slot.Intent(s.cfg.Now())
		if e != nil {
			return e
		}
		key, err := s.choose(r.Context(), body.ConversationID, in, false)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, IntentAnswer{RequestKey: key})
	}
	if body.HoldMinutes < 0 {
		return badRequest(booking.CodeInvalidTimeRange, "hold_minutes must be positive (the policy's hold TTL is the most)")
	}
	req, e := commitRequest(body.Slot, body.ExpectedPolicyVersion, nil, s.cfg.Now())
	if e != nil {
		return e
	}
	req.HoldTTL = time.Duration(body.HoldMinutes) * time.Minute
	key, err := s.choose(r.Context(), body.ConversationID, req.Intent, true)
	if err != nil {
		return err
	}
	rec, err := s.client.Hold(r.Context(), key, req)
	s.settle(r.Context(), body.ConversationID, key, rec, err)
	if err != nil {
		return s.answer(w, r, key, rec, err)
	}
	rec = s.present(r, rec)
	return writeJSON(w, http.StatusOK, IntentAnswer{RequestKey: key, Hold: &rec})
}

// choose is the key for a new choice of the conversation, unless an
// earlier booking of it is still pending: then 409
// earlier_booking_pending, naming it, and the agent checks it before
// anything else is booked.
func (s *Server) choose(ctx context.Context, conv string, in booking.Intent, book bool) (string, error) {
	ch, err := s.client.Choose(ctx, conv, in, book)
	if err != nil {
		return "", err
	}
	p, err := s.pendingEarlier(ctx, conv, ch.Outstanding)
	if err != nil {
		return "", err
	}
	if p != nil {
		return "", &Error{Status: http.StatusConflict, Code: string(codeEarlierPending),
			Message: fmt.Sprintf("an earlier booking of this conversation (request_key %s, reference %s) is not settled: check it with GET /v1/bookings/{request_key} first",
				p.RequestKey, p.Reference)}
	}
	return ch.RequestKey, nil
}

// IntentAnswer is what POST /v1/intents answers: the key for the chosen
// intent, and the hold's receipt when one was asked for (status "held",
// with hold_expires_at; never "confirmed" until book).
type IntentAnswer struct {
	RequestKey string           `json:"request_key"`
	Hold       *receipt.Receipt `json:"hold,omitempty"`
}

func (s *Server) book(w http.ResponseWriter, r *http.Request) error {
	var body BookingBody
	if e := decode(r.Body, s.cfg.MaxBody, &body); e != nil {
		return e
	}
	req, e := body.Request(s.cfg.Now())
	if e != nil {
		return e
	}
	rec, err := s.client.Commit(r.Context(), body.RequestKey, req)
	return s.answer(w, r, body.RequestKey, rec, err)
}

// status answers a key's receipt, decided or not, with 200: it is a read,
// so even a refusal is the key's answer, not an error of this request.
func (s *Server) status(w http.ResponseWriter, r *http.Request) error {
	rec, err := s.client.Status(r.Context(), r.PathValue("request_key"))
	if err != nil {
		return s.answer(w, r, r.PathValue("request_key"), rec, err)
	}
	return writeJSON(w, http.StatusOK, s.present(r, rec))
}

// byReference resolves the reference a caller quotes to its receipt.
func (s *Server) byReference(w http.ResponseWriter, r *http.Request) error {
	ref := r.URL.Query().Get("reference")
	if ref == "" {
		return badRequest(booking.CodeMissingField, "reference is required, e.g. ?reference=BS-7K2D-QF4M")
	}
	rec, err := s.client.ByReference(r.Context(), ref)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, s.present(r, rec))
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) error {
	rec, err := s.client.Cancel(r.Context(), r.PathValue("request_key"))
	return s.answer(w, r, r.PathValue("request_key"), rec, err)
}

func (s *Server) reschedule(w http.ResponseWriter, r *http.Request) error {
	var body RescheduleBody
	if e := decode(r.Body, s.cfg.MaxBody, &body); e != nil {
		return e
	}
	if err := booking.ValidateReplacement(body.NewRequestKey, r.PathValue("request_key")); err != nil {
		return fromRejection(err)
	}
	if err := s.defaultMove(r.Context(), r.PathValue("request_key"), &body); err != nil {
		return s.answer(w, r, body.NewRequestKey, receipt.Receipt{}, err)
	}
	req, e := commitRequest(body.Slot, body.ExpectedPolicyVersion, nil, s.cfg.Now())
	if e != nil {
		return e
	}
	rec, err := s.client.Reschedule(r.Context(), r.PathValue("request_key"), body.NewRequestKey, req)
	return s.answer(w, r, body.NewRequestKey, rec, err)
}

// attention is the operator's list: sagas pending or not mirrored, and
// open drift flags.
func (s *Server) attention(w http.ResponseWriter, r *http.Request) error {
	a, err := s.client.Attention(r.Context())
	if err != nil {
		return err
	}
	out := AttentionAnswer{Attention: a, Webhooks: []WebhookStatus{}}
	if s.cfg.Webhooks != nil {
		eps, err := s.cfg.Webhooks.Endpoints(r.Context())
		if err != nil {
			return err
		}
		for _, ep := range eps {
			if ep.FailingSince != nil {
				out.Webhooks = append(out.Webhooks, webhookStatus(ep))
			}
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// AttentionAnswer is the operator's list, with the webhook endpoints whose
// receivers are failing.
type AttentionAnswer struct {
	sagaclient.Attention
	Webhooks []WebhookStatus `json:"webhooks"`
}

// timeline is one booking as the store, the saga and the mirrors have it.
func (s *Server) timeline(w http.ResponseWriter, r *http.Request) error {
	key := r.PathValue("request_key")
	if err := booking.ValidateKey(key); err != nil {
		return fromRejection(err)
	}
	t, err := s.client.Timeline(r.Context(), key)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

// defaultMove fills what body leaves out from the booking of key, as the
// store holds it. A booking the store doesn't hold yet (its outcome
// pending) can't be moved by what changes: the caller hears so.
func (s *Server) defaultMove(ctx context.Context, key string, body *RescheduleBody) error {
	if s.cfg.Bookings == nil {
		return nil
	}
	old, err := s.cfg.Bookings.Lookup(ctx, key)
	if errors.Is(err, booking.ErrNotFound) {
		return badRequest(booking.CodeNotBooked, "the store holds no booking under %s to move; check its status first", key)
	}
	if err != nil {
		return err
	}
	var current string
	if body.ExpectedPolicyVersion == "" {
		p, err := s.cfg.Bookings.CurrentPolicy(ctx)
		if err != nil {
			return err
		}
		current = p.Version
	}
	body.DefaultFrom(old.Intent, current)
	return nil
}
