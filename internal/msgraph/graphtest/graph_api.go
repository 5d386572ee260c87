package graphtest

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// ServeHTTP routes Graph's calendar paths, the token endpoint and the
// fake's admin paths.
func (g *Graph) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.mux().ServeHTTP(w, r) }

func (g *Graph) mux() *http.ServeMux {
	const user = "/v1.0/users/{mailbox}"
	m := http.NewServeMux()
	m.HandleFunc("POST /{tenant}/oauth2/v2.0/token", fakeserver.Serve(&g.Faults, &g.mu, nil, "token", writeOAuthError, g.token))
	m.HandleFunc("POST "+user+"/calendar/events", g.op("events.create", g.create))
	m.HandleFunc("GET "+user+"/events", g.op("events.list", g.list))
	m.HandleFunc("GET "+user+"/events/{id}", g.op("events.get", g.get))
	m.HandleFunc("PATCH "+user+"/events/{id}", g.op("events.update", g.update))
	m.HandleFunc("DELETE "+user+"/events/{id}", g.op("events.delete", g.delete))
	m.HandleFunc("GET "+user+"/calendar/calendarView", g.op("calendarView", g.calendarView))
	m.HandleFunc("POST "+user+"/calendar/getSchedule", g.op("getSchedule", g.getSchedule))
	m.HandleFunc("/_fake/faults", fakeserver.FaultAdmin(&g.Faults))
	m.HandleFunc("DELETE /_fake/tokens", func(w http.ResponseWriter, _ *http.Request) {
		g.RevokeTokens() // a dev stack's operator can watch the worker sign in again
		w.WriteHeader(http.StatusNoContent)
	})
	// ?property=name&value=v lists only the events carrying that
	// property: a poller (the soak) reads one event, not the mailbox.
	m.HandleFunc("GET /_fake/events/{mailbox}", func(w http.ResponseWriter, r *http.Request) {
		if name := r.URL.Query().Get("property"); name != "" {
			fakeserver.WriteJSON(w, http.StatusOK, g.EventsWith(r.PathValue("mailbox"), name, r.URL.Query().Get("value")))
			return
		}
		fakeserver.WriteJSON(w, http.StatusOK, g.Events(r.PathValue("mailbox")))
	})
	return m
}

// op serves a Graph call: the token checked, then the mailbox, then h.
func (g *Graph) op(name string, h fakeserver.Handler) http.HandlerFunc {
	return fakeserver.Serve(&g.Faults, &g.mu, &g.journal, name, writeGraphError, func(r *http.Request) (int, any, error) {
		if err := g.authorized(r); err != nil {
			return 0, nil, err
		}
		if !g.exists(r.PathValue("mailbox")) {
			return 0, nil, graphErr(http.StatusNotFound, "ErrorInvalidUser", "The requested user '%s' is invalid.", r.PathValue("mailbox"))
		}
		return h(r)
	})
}

func graphErr(status int, code, format string, args ...any) error {
	return &fakeserver.APIError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// writeGraphError writes Graph's error envelope.
func writeGraphError(w http.ResponseWriter, status int, code, message string) {
	fakeserver.WriteJSON(w, status, map[string]any{"error": map[string]any{"code": code, "message": message,
		"innerError": map[string]string{"date": time.Now().UTC().Format(time.RFC3339), "request-id": newGraphID()[:36]}}})
}

// wireEvent is an event on the wire, in what Graph sends and takes.
type wireEvent struct {
	OData         string         `json:"@odata.etag,omitempty"`
	ID            string         `json:"id,omitempty"`
	ChangeKey     string         `json:"changeKey,omitempty"`
	Created       string         `json:"createdDateTime,omitempty"`
	Modified      string         `json:"lastModifiedDateTime,omitempty"`
	Subject       *string        `json:"subject,omitempty"`
	Body          *wireBody      `json:"body,omitempty"`
	Start         *wireTime      `json:"start,omitempty"`
	End           *wireTime      `json:"end,omitempty"`
	Location      *wireLocation  `json:"location,omitempty"`
	ShowAs        *string        `json:"showAs,omitempty"`
	IsCancelled   *bool          `json:"isCancelled,omitempty"`
	TransactionID *string        `json:"transactionId,omitempty"`
	Attendees     []wireAttendee `json:"attendees,omitempty"`
	Properties    []wireProperty `json:"singleValueExtendedProperties,omitempty"`
}

type wireBody struct {
	ContentType string `json:"contentType"`
	Content     string `json:"content"`
}

type wireTime struct {
	DateTime string `json:"dateTime"`
	TimeZone string `json:"timeZone"`
}

type wireLocation struct {
	DisplayName string `json:"displayName"`
}

type wireAttendee struct {
	EmailAddress struct {
		Address string `json:"address"`
	} `json:"emailAddress"`
	Type string `json:"type"`
}

type wireProperty struct {
	ID    string `json:"id"`
	Value string `json:"value"`
}

// graphWall is Graph's dateTime layout.
const graphWall = "2006-01-02T15:04:05.0000000"

// instant reads a dateTimeTimeZone: UTC or an IANA zone. A Windows zone
// name is valid for Graph but not read here; the adapter never sends one.
func (t *wireTime) instant() (time.Time, string, error) {
	if t == nil {
		return time.Time{}, "", graphErr(http.StatusBadRequest, "ErrorInvalidRequest", "start and end are required")
	}
	loc, err := localtime.LoadZone(t.TimeZone)
	if err != nil {
		return time.Time{}, "", graphErr(http.StatusBadRequest, "TimeZoneNotSupportedException", "A valid TimeZone value must be specified. The following TimeZone value is not supported: '%s'.", t.TimeZone)
	}
	v, err := time.ParseInLocation("2006-01-02T15:04:05.9999999", t.DateTime, loc)
	if err != nil {
		return time.Time{}, "", graphErr(http.StatusBadRequest, "ErrorInvalidRequest", "Cannot convert the literal '%s' to the expected type 'Edm.DateTimeOffset'.", t.DateTime)
	}
	return v, t.TimeZone, nil
}

// zoneOf is the zone a reply's times are in: Prefer: outlook.timezone, or
// UTC.
func zoneOf(r *http.Request) *time.Location {
	for _, p := range r.Header.Values("Prefer") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(p), "outlook.timezone="); ok {
			if loc, err := localtime.LoadZone(strings.Trim(v, `"`)); err == nil {
				return loc
			}
		}
	}
	return time.UTC
}

// wire renders ev for a reply, with the extended properties asked for.
func wire(ev *GraphEvent, loc *time.Location, props []string) wireEvent {
	out := wireEvent{OData: ev.ETag(), ID: ev.ID, ChangeKey: ev.ChangeKey, Created: ev.Created.Format(time.RFC3339Nano),
		Modified: ev.Modified.Format(time.RFC3339Nano), Subject: &ev.Subject, Body: &wireBody{ContentType: "text", Content: ev.Body},
		Start:    &wireTime{DateTime: ev.Start.In(loc).Format(graphWall), TimeZone: loc.String()},
		End:      &wireTime{DateTime: ev.End.In(loc).Format(graphWall), TimeZone: loc.String()},
		Location: &wireLocation{DisplayName: ev.Location}, ShowAs: &ev.ShowAs, IsCancelled: new(bool)}
	if ev.TransactionID != "" {
		out.TransactionID = &ev.TransactionID
	}
	for _, a := range ev.Attendees {
		var at wireAttendee
		at.EmailAddress.Address, at.Type = a, "required"
		out.Attendees = append(out.Attendees, at)
	}
	for _, id := range props {
		for k, v := range ev.Properties {
			if strings.EqualFold(k, id) {
				out.Properties = append(out.Properties, wireProperty{ID: k, Value: v})
			}
		}
	}
	return out
}

// expanded reads $expand=singleValueExtendedProperties($filter=id eq 'a'
// or id eq 'b'): the property ids to return.
func expanded(r *http.Request) ([]string, error) {
	v := r.URL.Query().Get("$expand")
	if v == "" {
		return nil, nil
	}
	inner, ok := strings.CutPrefix(v, "singleValueExtendedProperties($filter=")
	if !ok || !strings.HasSuffix(inner, ")") {
		return nil, graphErr(http.StatusBadRequest, "BadRequest", "Parsing OData Select and Expand failed: %s", v)
	}
	var ids []string
	for _, term := range strings.Split(strings.TrimSuffix(inner, ")"), " or ") {
		id, err := literalAfter(term, "id eq ")
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// literalAfter reads the OData string literal that follows prefix.
func literalAfter(term, prefix string) (string, error) {
	lit, ok := strings.CutPrefix(strings.TrimSpace(term), prefix)
	if !ok || len(lit) < 2 || lit[0] != '\'' || lit[len(lit)-1] != '\'' {
		return "", graphErr(http.StatusBadRequest, "BadRequest", "Invalid filter clause: %s", term)
	}
	return strings.ReplaceAll(lit[1:len(lit)-1], "''", "'"), nil
}

// markerFilter is the one $filter the fake understands, the one Graph
// documents for finding events by a single-value extended property.
var markerFilter = regexp.MustCompile(`^singleValueExtendedProperties/Any\(ep: ep/id eq ('(?:[^']|'')*') and ep/value eq ('(?:[^']|'')*')\)$`)
