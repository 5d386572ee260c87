package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// answer writes the receipt of a booking call. The client answers a fault
// after the request may have reached Temporal as pending_reconciliation;
// what is left is a failure before anything was sent: a retryable 503
// error and no receipt, since a resend's first call may have confirmed
// and a status here could contradict the store.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, key string, rec receipt.Receipt, err error) error {
	if err == nil {
		return edge.WriteReceipt(w, s.present(r, rec))
	}
	if _, technical := edge.Classify(err); technical {
		edge.Logger(r.Context()).Error("booking call failed", zap.String("request_key", key), zap.Error(err))
		return &edge.Error{Status: http.StatusServiceUnavailable, Code: string(booking.CodeUnavailable), RequestKey: key,
			Message: "bookingsaga could not answer now and this call changed nothing; retry with the same request_key"}
	}
	return err
}

func (s *Server) availability(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	from, err1 := time.Parse(time.RFC3339, q.Get("from"))
	to, err2 := time.Parse(time.RFC3339, q.Get("to"))
	agent, pool := q.Get("agent_id"), q.Get("agent_pool")
	if agent == edge.AnyAgent && pool != "" {
		agent = ""
	}
	if q.Get("property_id") == "" || agent == "" && pool == "" {
		return edge.BadRequest(booking.CodeMissingField, "property_id, and agent_id or agent_pool, are required")
	}
	if err1 != nil || err2 != nil {
		return edge.BadRequest(booking.CodeInvalidTime, "from and to must be RFC 3339 with an offset")
	}
	aq := booking.AvailabilityQuery{PropertyID: q.Get("property_id"), AgentID: agent, AgentPool: pool, From: from, To: to}
	if v := q.Get("extra_resources"); v != "" {
		aq.ExtraResources = strings.Split(v, ",")
	}
	if v := q.Get("duration_minutes"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return edge.BadRequest(booking.CodeInvalidWindow, "duration_minutes must be a positive number")
		}
		aq.Duration = time.Duration(n) * time.Minute
	}
	av, err := s.set.Catalogue.Availability(r.Context(), aq)
	if err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, edge.AvailabilityOf(av))
}

func (s *Server) intents(w http.ResponseWriter, r *http.Request) error {
	var body IntentBody
	if e := edge.Decode(r.Body, s.set.MaxBody, &body); e != nil {
		return e
	}
	if body.ConversationID == "" {
		return edge.BadRequest(booking.CodeMissingField, "conversation_id is required")
	}
	conv, e := edge.Conversation(r.Context(), body.ConversationID)
	if e != nil {
		return e
	}
	if !body.Hold {
		in, e := body.Slot.Intent(s.set.Now())
		if e != nil {
			return e
		}
		key, err := s.client.Pick(r.Context(), conv, in)
		if err != nil {
			return err
		}
		return edge.WriteJSON(w, http.StatusOK, IntentAnswer{RequestKey: key})
	}
	if body.HoldMinutes < 0 {
		return edge.BadRequest(booking.CodeInvalidTimeRange, "hold_minutes must be positive (the policy's hold TTL is the most)")
	}
	req, e := edge.NewCommit(body.Slot, body.ExpectedPolicyVersion, nil, s.set.Now())
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
	return edge.WriteJSON(w, http.StatusOK, IntentAnswer{RequestKey: key, Hold: &rec})
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
	if e := edge.Decode(r.Body, s.set.MaxBody, &body); e != nil {
		return e
	}
	req, e := body.Request(s.set.Now())
	if e != nil {
		return e
	}
	edge.AskedBy(r.Context(), &req)
	if body.ConversationID == "" {
		rec, err := s.client.Commit(r.Context(), body.RequestKey, req)
		return s.answer(w, r, body.RequestKey, rec, err)
	}
	// In its conversation, the booking keeps the pending rule: it waits
	// for an earlier booking still pending, and one of its own that goes
	// pending holds the next.
	conv, e := edge.Conversation(r.Context(), body.ConversationID)
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
	edge.Reconfirmed(r.Context(), s.set.Bookings, &rec)
	return edge.WriteJSON(w, http.StatusOK, s.present(r, rec))
}

// byReference resolves the reference a caller quotes to its receipt.
func (s *Server) byReference(w http.ResponseWriter, r *http.Request) error {
	ref := r.URL.Query().Get("reference")
	if ref == "" {
		return edge.BadRequest(booking.CodeMissingField, "reference is required, e.g. ?reference=BS-7K2D-QF4M")
	}
	rec, err := s.client.ByReference(r.Context(), ref)
	if err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, s.present(r, rec))
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) error {
	rec, err := s.client.Cancel(r.Context(), r.PathValue("request_key"))
	return s.answer(w, r, r.PathValue("request_key"), rec, err)
}

func (s *Server) reschedule(w http.ResponseWriter, r *http.Request) error {
	var body edge.RescheduleBody
	if e := edge.Decode(r.Body, s.set.MaxBody, &body); e != nil {
		return e
	}
	if err := booking.ValidateReplacement(body.NewRequestKey, r.PathValue("request_key")); err != nil {
		return edge.FromRejection(err)
	}
	if err := edge.DefaultMove(r.Context(), s.set.Bookings, r.PathValue("request_key"), &body); err != nil {
		return s.answer(w, r, body.NewRequestKey, receipt.Receipt{}, err)
	}
	req, e := edge.NewCommit(body.Slot, body.ExpectedPolicyVersion, nil, s.set.Now())
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
	return edge.WriteJSON(w, http.StatusOK, out)
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
		return edge.FromRejection(err)
	}
	if s.cfg.Timeline == nil {
		return &edge.Error{Status: http.StatusNotImplemented, Code: string(booking.CodeUnavailable), Message: "this API has no timelines (the saga client's)"}
	}
	t, err := s.cfg.Timeline(r.Context(), key)
	if err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, t)
}
