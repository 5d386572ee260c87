// Package agency holds which agency a call acts for, in a context from
// the edge (the agency of the caller's key) to the store, which names it
// on every statement and whose row-level security shows nothing of
// another agency; and the workflow ids of each agency's space. Through
// Temporal it travels in a header (package agencyheader), so the edge,
// which links no Temporal, can name it too.
package agency

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Agency is one agency (tenant) of a deployment: its number, which the
// store's rows carry, and its id, which keys, workflow ids and the
// operators' search attribute carry.
type Agency struct {
	No int    `json:"no"`
	ID string `json:"id"`
}

// Default is the agency of everything made before agencies, and of a
// deployment that never makes a second.
var Default = Agency{No: 1, ID: "default"}

// IsDefault reports whether a is the default agency.
func (a Agency) IsDefault() bool { return a.No == Default.No }

type ctxKey struct{}

// With makes ctx act for a.
func With(ctx context.Context, a Agency) context.Context {
	return context.WithValue(ctx, ctxKey{}, a)
}

// From is the agency ctx acts for: Default when none is named.
func From(ctx context.Context) Agency {
	if a, ok := ctx.Value(ctxKey{}).(Agency); ok {
		return a
	}
	return Default
}

// WorkflowID is the workflow id that id (a request key, or a companion's
// id) has in a's space: id itself for the default agency, so that every
// saga started before agencies keeps its id, and "agency:<id>:" and id
// for another. booking.ValidateKey refuses a key that starts with the
// prefix, so no two agencies' ids meet. Temporal takes ids of up to 1000
// bytes by default (limit.maxIDLength); the longest this makes, a
// 255-byte key under a 32-byte agency id and the longest companion
// prefix, is about 330.
func WorkflowID(a Agency, id string) string {
	if a.IsDefault() {
		return id
	}
	return booking.AgencyIDPrefix + a.ID + ":" + id
}

// Scoped is id in the space of the agency ctx acts for.
func Scoped(ctx context.Context, id string) string { return WorkflowID(From(ctx), id) }

// Unscoped is the id a workflow id of a's space was made from, and
// whether wid is of a's space at all.
func Unscoped(a Agency, wid string) (string, bool) {
	if a.IsDefault() {
		return wid, !strings.HasPrefix(wid, booking.AgencyIDPrefix)
	}
	return strings.CutPrefix(wid, booking.AgencyIDPrefix+a.ID+":")
}

// ValidID checks an agency id's shape, as the store's agency table does:
// a lowercase letter or digit, then up to 31 more or hyphens. Ids go in
// workflow ids, keys files and the search attribute, so no separators.
func ValidID(id string) error {
	if !idShape.MatchString(id) {
		return fmt.Errorf("agency id %q must be 1 to 32 lowercase letters, digits or hyphens, starting with a letter or digit", id)
	}
	return nil
}

var idShape = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// Named is an agency with the name a platform gave it, for the platform's
// own list.
type Named struct {
	Agency
	Name string `json:"name"`
}

// List is the deployment's agencies, as an activity answers them.
type List struct {
	Agencies []Agency
}

// MaxLabelled bounds the agencies a metric names by id: the first
// MaxLabelled made (by number, so that every process names each agency
// alike), and "other" past them, so that a metric's series grow with the
// agencies up to a bound a time-series database takes.
const MaxLabelled = 100

// Label is a's value of a metric's agency label.
func (a Agency) Label() string {
	if a.No > MaxLabelled {
		return "other"
	}
	return a.ID
}

// OfWorkflowID is the id of the agency whose space wid is in, as
// WorkflowID made it: "" for the default agency's.
func OfWorkflowID(wid string) string {
	rest, ok := strings.CutPrefix(wid, booking.AgencyIDPrefix)
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, ":")
	return id
}

// The paths of the callers' own pages (api/callerpage): the default
// agency's short, another's under its id, so that the page acts for it.
const (
	PagePattern       = "/v/{token}"
	AgencyPagePattern = "/a/{agency}/v/{token}"
)

// PageURL is the link to the page token opens, in a's space, under root
// (the API as the callers reach it), in lang: English, the page's
// default, names none.
func (a Agency) PageURL(root, token, lang string) string {
	link := strings.TrimSuffix(root, "/") + "/a/" + a.ID + "/v/" + token
	if a.IsDefault() || a.ID == "" {
		link = strings.TrimSuffix(root, "/") + "/v/" + token
	}
	if lang != "" && lang != "en" {
		link += "?lang=" + lang
	}
	return link
}
