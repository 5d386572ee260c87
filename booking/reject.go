package booking

import "fmt"

// Code is a stable, machine-readable reason for a refusal.
type Code string

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
	CodeIntentExpired    Code = "intent_expired"
	CodeNotBooked        Code = "not_booked"
	CodeWrongState       Code = "wrong_state"
	CodeFlagNotOpen      Code = "flag_not_open"
	CodeInvalidReference Code = "invalid_reference"
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
)

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
