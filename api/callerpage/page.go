// Package callerpage serves a caller's own page: the link in each of
// their texts and e-mails opens it, server-rendered, without JavaScript,
// in their language (en, fr, zh). It shows their booking, cancels it, or
// moves it to one of the free times it offers. The link's token is the
// capability (the store keeps its hash alone, booking.Link); each action
// is a new intent through the same saga as the agent's calls, so the
// same guarantees hold: the new time is booked before the old is
// released, an outcome not yet known is said to be pending, never failed,
// and a time taken meanwhile answers the times free now. Forms carry a
// value tied to the link and the page they came from, and are refused
// cross-site; each link's requests are limited. Nothing on the page
// shows the caller's contact details.
package callerpage

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/ratelimit"
	"github.com/bookingsaga/bookingsaga/internal/speech"
)

// Links finds what a caller's link opens; the store implements it.
type Links interface {
	FollowLink(ctx context.Context, token string) (booking.Link, error)
}

// Profiles reads the agency as its callers see it; the store implements
// it.
type Profiles interface {
	Profile(ctx context.Context) (booking.Profile, error)
}

// Config is the page's dependencies, which the wiring fills.
type Config struct {
	Links    Links
	Profiles Profiles
	// PerLink bounds each link's requests, views and actions together;
	// zero is DefaultPerLink.
	PerLink ratelimit.Limits
}

// DefaultPerLink lets a caller open and use their page a dozen times at
// once, then once every five seconds: more than a person does, and too
// few to try forms or slots in bulk. All of an agency's links together
// take 20 requests a second (a burst of 200), so that made-up tokens,
// each a bucket of its own, do not each ask the store.
func DefaultPerLink() ratelimit.Limits {
	return ratelimit.Limits{PerSecond: 0.2, Burst: 12, AgencyPerSecond: 20, AgencyBurst: 200}
}

// Page serves the callers' pages over the desk.
type Page struct {
	saga   edge.Calls
	set    edge.Settings
	cfg    Config
	limits *ratelimit.Buckets
	origin *http.CrossOriginProtection
}

// New serves the pages over c; without cfg.Links every link opens
// nothing.
func New(c edge.Calls, set edge.Settings, cfg Config) *Page {
	if cfg.PerLink.PerSecond == 0 {
		cfg.PerLink = DefaultPerLink()
	}
	return &Page{saga: c, set: set.WithDefaults(), cfg: cfg, limits: ratelimit.New(cfg.PerLink), origin: http.NewCrossOriginProtection()}
}

// Routes are the default agency's pages and each other agency's, under
// its id (agency.PagePath).
func (p *Page) Routes() []edge.Route {
	return []edge.Route{
		{Method: "GET", Path: agency.PagePattern, Handle: p.show},
		{Method: "POST", Path: agency.PagePattern, Handle: p.act},
		{Method: "GET", Path: agency.AgencyPagePattern, Handle: p.show},
		{Method: "POST", Path: agency.AgencyPagePattern, Handle: p.act},
	}
}

// visit is one request to a link's page: what it opened and how to say
// it.
type visit struct {
	token   string
	link    booking.Link
	booking booking.Booking
	sp      speech.Speaker
	// change is the key of a change answered pending, whose reference
	// the notice names beside the booking that stands.
	change string
}

// open charges the link's budget and follows it. It answers the page
// that says why when there is nothing to show (written already, with ok
// false).
func (p *Page) open(w http.ResponseWriter, r *http.Request, action string) (v visit, ok bool, err error) {
	v.token = r.PathValue("token")
	v.sp = p.speaker(r)
	if p.cfg.Links == nil || len(v.token) != tokenLength {
		return v, false, p.notice(w, r, v, action, "unknown", http.StatusNotFound)
	}
	sum := sha256.Sum256([]byte(v.token))
	name := "link:" + hex.EncodeToString(sum[:8])
	if verdict := p.limits.Charge(name, agency.From(r.Context()).ID, nil, false, p.set.Now()); !verdict.OK {
		w.Header().Set("Retry-After", "5")
		return v, false, p.notice(w, r, v, action, "busy", http.StatusTooManyRequests)
	}
	if p.cfg.Profiles != nil {
		prof, err := p.cfg.Profiles.Profile(r.Context())
		if err != nil {
			return v, false, err
		}
		v.sp.Agency, v.sp.Phone = prof.Name, prof.Phone
	}
	v.link, err = p.cfg.Links.FollowLink(r.Context(), v.token)
	switch {
	case errors.Is(err, booking.ErrLinkUnknown):
		return v, false, p.notice(w, r, v, action, "unknown", http.StatusNotFound)
	case errors.Is(err, booking.ErrLinkExpired):
		return v, false, p.notice(w, r, v, action, "expired", http.StatusGone)
	case errors.Is(err, booking.ErrLinkRevoked):
		return v, false, p.notice(w, r, v, action, "revoked", http.StatusGone)
	case err != nil:
		return v, false, err
	}
	v.booking, err = p.set.Bookings.Lookup(r.Context(), v.link.RequestKey)
	switch {
	case errors.Is(err, booking.ErrNotFound): // anonymised at retention, or never booked
		return v, false, p.notice(w, r, v, action, "gone", http.StatusGone)
	case err != nil:
		return v, false, err
	}
	names := map[string]string{}
	if p.set.Names != nil {
		names = p.set.Names.Lookup(r.Context(), v.sp.Lang, []string{v.booking.Intent.PropertyID, v.booking.Intent.AgentID})
	}
	v.sp.Names = names
	if res, err := p.set.Catalogue.Resource(r.Context(), v.booking.Intent.PropertyID); err == nil {
		v.sp.Address = res.AddressIn(string(v.sp.Lang))
	}
	return v, true, nil
}

// tokenLength is a token's length in base64url: anything else is no
// token, and asks the store nothing.
var tokenLength = base64.RawURLEncoding.EncodedLen(booking.LinkTokenBytes)

// speaker speaks the language the link names (?lang=), else the first
// of the browser's the page speaks, else English.
func (p *Page) speaker(r *http.Request) speech.Speaker {
	if lang, err := speech.ParseLang(r.URL.Query().Get("lang")); err == nil && r.URL.Query().Has("lang") {
		return speech.Speaker{Lang: lang}
	}
	return speech.Speaker{Lang: speech.FromAcceptLanguage(r.Header.Get("Accept-Language"))}
}

// count is the metric of the pages' requests, by what they asked and how
// it ended; a refusal is counted here and logged nowhere.
func (p *Page) count(r *http.Request, action, result string) {
	p.set.Metrics.Tagged(map[string]string{"agency": agency.From(r.Context()).Label(), "action": action, "result": result}).
		Counter("caller_page_total").Inc(1)
}
