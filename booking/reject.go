package booking

import (
	"fmt"
	"slices"
)

// Code is a stable, machine-readable reason for a refusal or an error.
// Every code the service can answer is declared below, with its kind; a
// test walks the module for codes written anywhere else.
type Code string

// Kind is what a code says about the request that met it.
type Kind int

const (
	// Refused: a well-formed request the rules or the store turned down
	// (a conflict, a closed day, a changed policy): a 409, or a receipt.
	Refused Kind = iota
	// Input: the request itself is malformed or names nothing that
	// exists: a 400, and nothing is written.
	Input
	// Edge: the edge's own answers (auth, limits, routes, a dependency
	// down), each raised with its HTTP status where it happens.
	Edge
)

// Refusal codes. They are part of the API: agents and tests match on them.
const (
	CodeInvalidRequestKey    Code = "invalid_request_key"
	CodeRequestKeyReused     Code = "request_key_reused"
	CodeMissingField         Code = "missing_field"
	CodeInvalidTimeRange     Code = "invalid_time_range"
	CodeUnknownTimeZone      Code = "unknown_time_zone"
	CodeTimeZoneMismatch     Code = "time_zone_mismatch"
	CodeDuplicateResource    Code = "duplicate_resource"
	CodeTooManyResources     Code = "too_many_resources"
	CodeUnknownResource      Code = "unknown_resource"
	CodeWrongResourceKind    Code = "wrong_resource_kind"
	CodeNoCurrentPolicy      Code = "no_current_policy"
	CodePolicyVersionChanged Code = "policy_version_changed"
	// CodeZoneRulesChanged: the offer was resolved under another release
	// of the zone rules than the store's.
	CodeZoneRulesChanged      Code = "zone_rules_changed"
	CodeOutsideBookableHours  Code = "outside_bookable_hours"
	CodeTooShortNotice        Code = "too_short_notice"
	CodeStartsInPast          Code = "starts_in_past"
	CodeInvalidResource       Code = "invalid_resource"
	CodeInvalidPolicy         Code = "invalid_policy"
	CodePolicyImmutable       Code = "policy_version_immutable"
	CodeCapacityBelowBookings Code = "capacity_below_bookings"
	CodeInvalidReplacement    Code = "invalid_replacement"
	CodeInvalidWindow         Code = "invalid_window"
	CodeHoldExpired           Code = "hold_expired"
	// CodeIntentExpired: the intent lapsed before anyone committed it.
	CodeIntentExpired Code = "intent_expired"
	// CodeCancelledBeforeBooked: the caller cancelled while the call was
	// pending and before anything booked it.
	CodeCancelledBeforeBooked Code = "cancelled_before_booked"
	CodeNotBooked             Code = "not_booked"
	CodeWrongState            Code = "wrong_state"
	CodeFlagNotOpen           Code = "flag_not_open"
	CodeInvalidReference      Code = "invalid_reference"
	// CodeReferenceCollision: the key's spoken reference already names
	// another request (a commit: make a new key), or a reference names
	// more than one (a lookup: ask by the request key).
	CodeReferenceCollision Code = "reference_collision"
	// CodeBookingLost: the store lost a booking its saga had confirmed,
	// and an operator released it rather than restore it.
	CodeBookingLost Code = "booking_lost"
	// A resource's own rules (Rules): closed then, off, too far ahead, or
	// full for the day or week.
	CodeOutsideHours  Code = "outside_hours"
	CodeTimeOff       Code = "time_off"
	CodeBeyondHorizon Code = "beyond_horizon"
	CodeLimitReached  Code = "limit_reached"
	// Bad rules or pools: nothing is written.
	CodeInvalidHours    Code = "invalid_hours"
	CodeInvalidOverride Code = "invalid_override"
	CodeInvalidLimit    Code = "invalid_limit"
	CodeEmptyPool       Code = "empty_pool"
	CodeUnknownPool     Code = "unknown_pool"
	// CodeSlotTaken: a conflict's reason, the slot no longer free.
	CodeSlotTaken Code = "slot_taken"
	// CodeInvalidRequest: a refusal the saga met without a code of its own.
	CodeInvalidRequest Code = "invalid_request"
	// How a viewing went (Outcome): a value that is none, or a booking
	// that can't take it (not started, moved, held).
	CodeInvalidOutcome    Code = "invalid_outcome"
	CodeOutcomeNotAllowed Code = "outcome_not_allowed"
)

// The edge's codes: what the HTTP API and the voice tools add.
const (
	CodeBadJSON          Code = "bad_json"
	CodeBodyTooLarge     Code = "body_too_large"
	CodeInvalidTime      Code = "invalid_time"
	CodeNonexistentTime  Code = "nonexistent_local_time"
	CodeAmbiguousTime    Code = "ambiguous_local_time"
	CodeNotFound         Code = "not_found"
	CodeMethodNotAllowed Code = "method_not_allowed"
	CodeUnauthorized     Code = "unauthorized"
	CodeWrongScope       Code = "wrong_scope"
	CodeRateLimited      Code = "rate_limited"
	CodeUnavailable      Code = "temporarily_unavailable"
	CodeRefusedURL       Code = "refused_url"
	CodeEarlierPending   Code = "earlier_booking_pending"
	// CodeNotThisConversation: a voice tool named a key its conversation
	// did not make.
	CodeNotThisConversation Code = "not_this_conversation"
	// CodeInvalidConversationID: a conversation id over maxConversationID
	// bytes, or none where one is needed.
	CodeInvalidConversationID Code = "invalid_conversation_id"
	CodeContactErased         Code = "contact_erased"
	CodeNoContact             Code = "no_contact"
	// CodeInvalidContact: a contact whose channel can't be used (SMS
	// without a phone in E.164, e-mail without an address) or is unknown.
	CodeInvalidContact Code = "invalid_contact"
	// CodeInvalidAgency: an agency id or name out of shape.
	CodeInvalidAgency Code = "invalid_agency"
)

// kinds is every declared code's kind.
var kinds = map[Code]Kind{
	CodeInvalidRequestKey: Input, CodeRequestKeyReused: Refused, CodeMissingField: Input, CodeInvalidTimeRange: Input,
	CodeUnknownTimeZone: Input, CodeTimeZoneMismatch: Input, CodeDuplicateResource: Input, CodeTooManyResources: Input,
	CodeUnknownResource: Input, CodeWrongResourceKind: Input, CodeNoCurrentPolicy: Refused, CodePolicyVersionChanged: Refused,
	CodeZoneRulesChanged: Refused, CodeOutsideBookableHours: Refused, CodeTooShortNotice: Refused, CodeStartsInPast: Input,
	CodeInvalidResource: Input, CodeInvalidPolicy: Input, CodePolicyImmutable: Refused, CodeCapacityBelowBookings: Refused,
	CodeInvalidReplacement: Input, CodeInvalidWindow: Input, CodeHoldExpired: Refused, CodeIntentExpired: Refused, CodeCancelledBeforeBooked: Refused,
	CodeNotBooked: Refused, CodeWrongState: Refused, CodeFlagNotOpen: Refused, CodeInvalidReference: Input,
	CodeReferenceCollision: Refused, CodeBookingLost: Refused, CodeOutsideHours: Refused, CodeTimeOff: Refused,
	CodeBeyondHorizon: Refused, CodeLimitReached: Refused, CodeInvalidHours: Input, CodeInvalidOverride: Input,
	CodeInvalidLimit: Input, CodeEmptyPool: Input, CodeUnknownPool: Input, CodeSlotTaken: Refused, CodeInvalidRequest: Refused,
	CodeInvalidOutcome: Input, CodeOutcomeNotAllowed: Refused,

	CodeBadJSON: Input, CodeBodyTooLarge: Input, CodeInvalidTime: Input, CodeNonexistentTime: Input, CodeAmbiguousTime: Input,
	CodeNotFound: Edge, CodeMethodNotAllowed: Edge, CodeUnauthorized: Edge, CodeWrongScope: Edge, CodeRateLimited: Edge,
	CodeUnavailable: Edge, CodeRefusedURL: Input, CodeEarlierPending: Refused, CodeNotThisConversation: Input,
	CodeContactErased: Edge, CodeNoContact: Edge, CodeInvalidConversationID: Input, CodeInvalidContact: Input,
	CodeInvalidAgency: Input,
}

// Kind is the code's kind; an undeclared code is Refused, the answer that
// writes nothing and blames no input (a test keeps every code declared).
func (c Code) Kind() Kind { return kinds[c] }

// Input reports a code that means the request itself was malformed or
// named something that does not exist: HTTP 400, nothing written.
func (c Code) Input() bool { return kinds[c] == Input }

// Codes are every declared code, sorted.
func Codes() []Code {
	out := make([]Code, 0, len(kinds))
	for c := range kinds {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// Rejection is a business refusal: retrying the same request cannot change
// it. Nothing was written.
type Rejection struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

func (r *Rejection) Error() string { return string(r.Code) + ": " + r.Message }

// Rejectf builds a Rejection.
func Rejectf(code Code, format string, args ...any) *Rejection {
	return &Rejection{Code: code, Message: fmt.Sprintf(format, args...)}
}
