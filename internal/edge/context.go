package edge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/admission"
)

type ctxKey struct{}

// callerKey carries the name of the key a call came in under.
type callerKey struct{}

// Caller is the name of the key the request came in under: an API key's,
// or a voice platform's ("retell", "vapi") when it signed the call.
func Caller(ctx context.Context) string {
	name, _ := ctx.Value(callerKey{}).(string)
	return name
}

// Admitted is who admission counts the call as from: its key, and the
// agency the key acts for.
func Admitted(ctx context.Context) admission.Caller {
	return admission.Caller{Agency: agency.From(ctx).ID, Key: Caller(ctx)}
}

// MaxConversationID bounds a conversation id (a platform's call id, an
// X-Call-Id header, a backend's own): whatever keys on it holds ids of
// this size at most.
const MaxConversationID = 200

// Conversation is a conversation id as the service keys it: scoped by the
// key the call came in under, so that two callers (two backends, two
// platforms) who choose the same id never share a conversation, its keys
// or its bookings. An id over MaxConversationID bytes is refused.
func Conversation(ctx context.Context, id string) (string, *Error) {
	return ConversationOf(Caller(ctx), id)
}

// ConversationOf is Conversation for a call that came in under caller.
func ConversationOf(caller, id string) (string, *Error) {
	if len(id) > MaxConversationID {
		return "", BadRequest(booking.CodeInvalidConversationID, "the conversation's id is over %d bytes", MaxConversationID)
	}
	return caller + "/" + id, nil
}

func logger(r *http.Request) *zap.Logger { return Logger(r.Context()) }

// Logger is the request's logger, with its request id.
func Logger(ctx context.Context) *zap.Logger {
	if l, ok := ctx.Value(ctxKey{}).(*zap.Logger); ok {
		return l
	}
	return zap.NewNop()
}

func newRequestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// WriteJSON answers v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// Shed counts a call not sent because too many are in flight, for the
// agency it acts for.
func (s Settings) Shed(ctx context.Context) {
	s.Metrics.Tagged(map[string]string{"agency": agency.From(ctx).Label()}).Counter("booking_calls_shed_total").Inc(1)
}
