package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// answer writes the receipt of a booking call. The client answers a fault
// after the request may have reached Temporal as pending_reconciliation;
// what is left is a failure before anything was sent: a retryable 503
// error and no receipt, since a resend's first call may have confirmed
// and a status here could contradict the store.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, key string, rec receipt.Receipt, err error) error {
	if err == nil {
		return WriteReceipt(w, s.present(r, rec))
	}
	if _, technical := Classify(err); technical {
		logger(r).Error("booking call failed", zap.String("request_key", key), zap.Error(err))
		return &Error{Status: http.StatusServiceUnavailable, Code: string(booking.CodeUnavailable), RequestKey: key,
			Message: "bookingsaga could not answer now and this call changed nothing; retry with the same request_key"}
	}
	return err
}

// WriteReceipt answers a receipt already in its wire shape. A refusal
// caused by the request (an unknown resource, say) is a 400 and a key
// reused for another intent a 409; every other outcome, conflict
// included, is a 200 whose status says what happened.
func WriteReceipt(w http.ResponseWriter, r receipt.Receipt) error {
	if r.Status == receipt.StatusRejected && r.Reason != nil {
		switch {
		case booking.Code(r.Reason.Code).Input():
			return WriteJSON(w, http.StatusBadRequest, &Error{Code: r.Reason.Code, Message: r.Reason.Message})
		case r.Reason.Code == string(booking.CodeRequestKeyReused):
			return WriteJSON(w, http.StatusConflict, &Error{Code: r.Reason.Code, Message: r.Reason.Message})
		}
	}
	return WriteJSON(w, http.StatusOK, r)
}

func (s *Server) availability(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	from, err1 := time.Parse(time.RFC3339, q.Get("from"))
	to, err2 := time.Parse(time.RFC3339, q.Get("to"))
	agent, pool := q.Get("agent_id"), q.Get("agent_pool")
	if agent == AnyAgent && pool != "" {
		agent = ""
	}
	if q.Get("property_id") == "" || agent == "" && pool == "" {
		return BadRequest(booking.CodeMissingField, "property_id, and agent_id or agent_pool, are required")
	}
	if err1 != nil || err2 != nil {
		return BadRequest(booking.CodeInvalidTime, "from and to must be RFC 3339 with an offset")
	}
	aq := booking.AvailabilityQuery{PropertyID: q.Get("property_id"), AgentID: agent, AgentPool: pool, From: from, To: to}
	if v := q.Get("extra_resources"); v != "" {
		aq.ExtraResources = strings.Split(v, ",")
	}
	if v := q.Get("duration_minutes"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return BadRequest(booking.CodeInvalidWindow, "duration_minutes must be a positive number")
		}
		aq.Duration = time.Duration(n) * time.Minute
	}
	av, err := s.cfg.Catalogue.Availability(r.Context(), aq)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, AvailabilityOf(av))
}

func (s *Server) intents(w http.ResponseWriter, r *http.Request) error {
	var body IntentBody
	if e := Decode(r.Body, s.cfg.MaxBody, &body); e != nil {
		return e
	}
	if body.ConversationID == "" {
		return BadRequest(booking.CodeMissingField, "conversation_id is required")
	}
	conv, e := Conversation(r.Context(), body.ConversationID)
	if e != nil {
		return e
	}
	if !body.Hold {
		in, e := body.Slot.Intent(s.cfg.Now())
		if e != nil {
			return e
		}
		key, err := s.client.Pick(r.Context(), conv, in)
		if err != nil {
			return err
		}
		return WriteJSON(w, http.StatusOK, IntentAnswer{RequestKey: key})
	}
	if body.HoldMinutes < 0 {
		return BadRequest(booking.CodeInvalidTimeRange, "hold_minutes must be positive (the policy's hold TTL is the most)")
	}
	req, e := NewCommit(body.Slot, body.ExpectedPolicyVersion, nil, s.cfg.Now())
	if e != nil {
		return e
	}
	req.HoldTTL = time.Duration(body.HoldMinutes) * time.Minute
	key, rec, err := s.client.BookIn(r.Context(), conv, req.Intent, func(ctx context.Context, key string) (receipt.Receipt, error) {
		return s.client.Hold(ctx, key, req)
	})
	if err != nil {
		return s.answer(w, r, key, rec, err)
	}
	rec = s.present(r, rec)
	return WriteJSON(w, http.StatusOK, IntentAnswer{RequestKey: key, Hold: &rec})
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
	if e := Decode(r.Body, s.cfg.MaxBody, &body); e != nil {
		return e
	}
	req, e := body.Request(s.cfg.Now())
	if e != nil {
		return e
	}
	AskedBy(r.Context(), &req)
	if body.ConversationID == "" {
		rec, err := s.client.Commit(r.Context(), body.RequestKey, req)
		return s.answer(w, r, body.RequestKey, rec, err)
	}
	// In its conversation, the booking keeps the pending rule: it waits
	// for an earlier booking still pending, and one of its own that goes
	// pending holds the next.
	conv, e := Conversation(r.Context(), body.ConversationID)
	if e != nil {
		return e
	}
	_, rec, err := s.client.BookIn(r.Context(), conv, req.Intent, func(ctx context.Context, key string) (receipt.Receipt, error) {
		if key != body.RequestKey {
			return receipt.Receipt{}, booking.Rejectf(booking.CodeNotThisConversation,
				"request_key %s is not the one conversation %s was given for this slot (POST /v1/intents gives it)", body.RequestKey, body.ConversationID)
		}
		return s.client.Commit(ctx, key, req)
	})
	return s.answer(w, r, body.RequestKey, rec, err)
}

// status answers a key's receipt, decided or not, with 200: it is a read,
// so even a refusal is the key's answer, not an error of this request.
func (s *Server) status(w http.ResponseWriter, r *http.Request) error {
	rec, err := s.client.Status(r.Context(), r.PathValue("request_key"))
	if err != nil {
		return s.answer(w, r, r.PathValue("request_key"), rec, err)
	}
	return WriteJSON(w, http.StatusOK, s.present(r, rec))
}

// byReference resolves the reference a caller quotes to its receipt.
func (s *Server) byReference(w http.ResponseWriter, r *http.Request) error {
	ref := r.URL.Query().Get("reference")
	if ref == "" {
		return BadRequest(booking.CodeMissingField, "reference is required, e.g. ?reference=BS-7K2D-QF4M")
	}
	rec, err := s.client.ByReference(r.Context(), ref)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, s.present(r, rec))
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) error {
	rec, err := s.client.Cancel(r.Context(), r.PathValue("request_key"))
	return s.answer(w, r, r.PathValue("request_key"), rec, err)
}

func (s *Server) reschedule(w http.ResponseWriter, r *http.Request) error {
	var body RescheduleBody
	if e := Decode(r.Body, s.cfg.MaxBody, &body); e != nil {
		return e
	}
	if err := booking.ValidateReplacement(body.NewRequestKey, r.PathValue("request_key")); err != nil {
		return FromRejection(err)
	}
	if err := DefaultMove(r.Context(), s.cfg.Bookings, r.PathValue("request_key"), &body); err != nil {
		return s.answer(w, r, body.NewRequestKey, receipt.Receipt{}, err)
	}
	req, e := NewCommit(body.Slot, body.ExpectedPolicyVersion, nil, s.cfg.Now())
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
	return WriteJSON(w, http.StatusOK, out)
}

// AttentionAnswer is the operator's list, with the webhook endpoints whose
// receivers are failing.
type AttentionAnswer struct {
	booking.Attention
	Webhooks []WebhookStatus `json:"webhooks"`
}

// timeline is one booking as the store, the saga and the mirrors have it.
func (s *Server) timeline(w http.ResponseWriter, r *http.Request) error {
	key := r.PathValue("request_key")
	if err := booking.ValidateKey(key); err != nil {
		return FromRejection(err)
	}
	if s.cfg.Timeline == nil {
		return &Error{Status: http.StatusNotImplemented, Code: string(booking.CodeUnavailable), Message: "this API has no timelines (the saga client's)"}
	}
	t, err := s.cfg.Timeline(r.Context(), key)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, t)
}

// DefaultMove fills what body leaves out from the booking of key, as the
// store (bookings) holds it; without bookings it leaves body as it is. A
// booking the store doesn't hold yet (its outcome pending) can't be moved
// by what changes: the caller hears so.
func DefaultMove(ctx context.Context, bookings Bookings, key string, body *RescheduleBody) error {
	if bookings == nil {
		return nil
	}
	old, err := bookings.Lookup(ctx, key)
	if errors.Is(err, booking.ErrNotFound) {
		return BadRequest(booking.CodeNotBooked, "the store holds no booking under %s to move; check its status first", key)
	}
	if err != nil {
		return err
	}
	var current string
	if body.ExpectedPolicyVersion == "" {
		p, err := bookings.CurrentPolicy(ctx)
		if err != nil {
			return err
		}
		current = p.Version
	}
	body.DefaultFrom(old.Intent, current)
	return nil
}
