// Package voice serves the voice tools an AI agent calls during a phone
// call (check_availability, select_slot, book, booking_status,
// find_booking, property_info, request_human, cancel_booking,
// reschedule_booking), defined once (tooldefs.go) and served to Retell and
// Vapi in their documented shapes and over MCP. Every answer is a typed
// Answer whose [status] the agent words its reply from; only [confirmed]
// means booked.
//
// The tools mount on the REST API's server (edge.Server.Mount) behind its
// keys, limits and logs, and read errors through edge.Classify, the edge's
// one classification. The conversation's pending rule is the saga
// client's (BookIn, behind the Sagas port).
package voice

import (
	"context"
	"net/http"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// Config configures the voice tools.
type Config struct {
	// RetellKey verifies X-Retell-Signature when set.
	RetellKey string
	// VapiSecret is compared with the X-Vapi-Secret header when set (a
	// Vapi bearer credential with headerName X-Vapi-Secret, its "Bearer "
	// prefix on or off).
	VapiSecret string
	// VapiHMACSecret verifies a Vapi HMAC credential's signature when set:
	// x-signature over "{timestamp}.{body}", SHA-256, hex, with
	// x-timestamp inside a five-minute window.
	VapiHMACSecret string
	// Contacts opens the sealed contact find_booking compares a phone
	// with, and finds contacts by caller ID; without it find_booking
	// answers it cannot.
	Contacts Contacts
	// FindBudget counts find_booking's attempts per reference for every
	// API process (the store); nil counts them in this process alone.
	FindBudget FindBudget
	// FindsPerKeyHour is find_booking's attempts an hour for one API key,
	// over all its calls: a platform's key carries all its callers', so
	// size it for the platform's volume; 0 is 300. Each call, each
	// reference and each caller number keeps its own smaller budget.
	FindsPerKeyHour int
	// HandoffsPerKeyHour bounds request_human's new hand-offs an hour for
	// one API key, for every API process (the store's count, FindBudget):
	// each one reaches staff and every webhook receiver. 0 is
	// DefaultHandoffsPerKeyHour.
	HandoffsPerKeyHour int
	// CallerIDHeader names the routes ("retell" for Retell's args-only
	// functions, "mcp") whose X-Caller-Number header is caller ID: only
	// where a platform in front of the API sets that header itself. By
	// default a header is not caller ID: any agent key could set it.
	CallerIDHeader []string
	// Secrets are each agency's platform secrets, which its tool URLs
	// check calls against (secrets.go); without it those URLs refuse
	// every call.
	Secrets Secrets
}

// CallerIDRoutes are the routes a caller ID header can be declared for.
var CallerIDRoutes = []string{"retell", "mcp"}

// headerCallerID is the caller ID a header gives on route, where the
// deployment declared that route platform-fronted.
func (t *Tools) headerCallerID(route string, h http.Header) string {
	if !t.fronted(route) {
		return ""
	}
	return h.Get(CallerNumberHeader)
}

// Tools are the voice tools over one saga client.
type Tools struct {
	saga Sagas
	// set are the edge's settings every route reads; cfg the tools' own.
	set edge.Settings
	cfg Config
	// replays binds Retell's signatures to what they signed.
	replays *replays
	// finds limits find_booking's attempts.
	finds *finds
	// mcpServer serves /v1/mcp over the same tools.
	mcpServer http.Handler
}

// Sagas is what the tools ask of the saga client (*desk.Desk
// implements it): the booking calls, and the conversation's bookkeeping
// (which keys it made or adopted; a key let go).
type Sagas interface {
	edge.Calls
	Made(ctx context.Context, conv, key string) (bool, error)
	Adopt(ctx context.Context, conv, key string) error
	Keys(ctx context.Context, conv string) ([]string, error)
	Forget(ctx context.Context, conv, key string)
	RequestHandoff(ctx context.Context, h booking.Handoff) (booking.Handoff, error)
	StartConversation(ctx context.Context, conv string) error
	KnownConversation(ctx context.Context, conv string) (bool, error)
}

// Contacts are the sealed contacts find_booking reads (*store.Store
// implements it): opened by key, and found by a caller's number in
// international form, with an opaque name of that number for budgets;
// and the one-time codes a booking found by caller ID is unlocked with,
// texted to its own number (findcode.go).
type Contacts interface {
	Contact(ctx context.Context, key string) (booking.Contact, error)
	KeysByPhone(ctx context.Context, number string) (ref string, keys []string, err error)
	IssueUnlockCode(ctx context.Context, conv, key string) (sent bool, err error)
	UseUnlockCode(ctx context.Context, conv, code string) (key string, err error)
}

// FindBudget is the store's count of attempts per name, for every API
// process (*store.Store implements it): find_booking's per reference and
// per caller number, request_human's per key.
type FindBudget interface {
	SpendFindAttempt(ctx context.Context, ref string, limit int, per time.Duration) (bool, error)
}

// New builds the tools over the desk.
func New(c Sagas, set edge.Settings, cfg Config) *Tools {
	t := &Tools{saga: c, set: set.WithDefaults(), cfg: cfg, replays: &replays{}, finds: &finds{perKeyHour: cfg.FindsPerKeyHour}}
	t.mcpServer = t.mcpHandler()
	return t
}

// Routes are the tools' endpoints, for edge.Server.Mount. A platform
// without its own secret configured falls back to an agent key: the tool
// endpoints are never open by default.
func (t *Tools) Routes() []edge.Route {
	return []edge.Route{
		{Method: "POST", Path: "/v1/tools/retell", Scope: platformScope(t.cfg.RetellKey), Handle: t.retell, Verify: t.retellVerified, PerCall: true},
		{Method: "POST", Path: "/v1/tools/retell/{tool}", Scope: platformScope(t.cfg.RetellKey), Handle: t.retell, Verify: t.retellVerified, PerCall: true},
		{Method: "GET", Path: "/v1/tools/retell/functions", Scope: apikey.ScopeAgent, Handle: t.retellFunctions},
		{Method: "GET", Path: "/v1/tools/vapi/tools", Scope: apikey.ScopeAgent, Handle: t.vapiTools},
		{Method: "POST", Path: "/v1/tools/vapi", Scope: platformScope(t.cfg.VapiSecret + t.cfg.VapiHMACSecret), Handle: t.vapi, Verify: t.vapiVerified, PerCall: true},
		{Method: "POST", Path: "/v1/mcp", Scope: apikey.ScopeAgent, Handle: t.mcp, PerCall: true},
		// An agency's own tool URLs, signed with its own secrets.
		{Method: "POST", Path: "/v1/agencies/{agency}/tools/retell", Handle: t.retell, Verify: t.retellVerified, PerCall: true},
		{Method: "POST", Path: "/v1/agencies/{agency}/tools/retell/{tool}", Handle: t.retell, Verify: t.retellVerified, PerCall: true},
		{Method: "POST", Path: "/v1/agencies/{agency}/tools/vapi", Handle: t.vapi, Verify: t.vapiVerified, PerCall: true},
	}
}

// platformScope: a tool endpoint whose platform secret is set checks that
// secret itself; without one it needs an agent key.
func platformScope(secret string) apikey.Scope {
	if secret != "" {
		return ""
	}
	return apikey.ScopeAgent
}
