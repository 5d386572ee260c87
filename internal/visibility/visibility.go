// Package visibility holds the booking sagas' search attributes, which an
// operator filters on in the Temporal UI and the service queries, and the
// visibility queries over them. It is Temporal's vocabulary, kept out of
// booking so that the packages that share booking's link no Temporal SDK.
package visibility

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
)

// Search attributes an operator filters on in the Temporal UI.
var (
	AttrStatus         = temporal.NewSearchAttributeKeyKeyword("BookingStatus")
	AttrProperty       = temporal.NewSearchAttributeKeyKeyword("BookingProperty")
	AttrAgent          = temporal.NewSearchAttributeKeyKeyword("BookingAgent")
	AttrSlotStart      = temporal.NewSearchAttributeKeyTime("BookingSlotStart")
	AttrCalendarSynced = temporal.NewSearchAttributeKeyBool("BookingCalendarSynced")
	AttrCRMSynced      = temporal.NewSearchAttributeKeyBool("BookingCRMSynced")
	// AttrCallerNotified is whether the last message to the caller went
	// out (true) or was refused for good (false); unset while none has
	// ended, or when the caller agreed to none.
	AttrCallerNotified = temporal.NewSearchAttributeKeyBool("BookingCallerNotified")
	// AttrReference is the reference the caller was given
	// (receipt.Reference), so a pending key the store has not decided yet
	// can be found by it.
	AttrReference = temporal.NewSearchAttributeKeyKeyword("BookingReference")
	// AttrAgency is the agency a workflow acts for, set at its start on
	// every workflow of an agency but the default one, whose workflows
	// (all of them, before agencies) carry none: InAgency reads unset as
	// the default agency.
	AttrAgency = temporal.NewSearchAttributeKeyKeyword("AgencyId")
)

// Agency is the search attribute a workflow of a starts with: none for
// the default agency, so that a deployment of one agency starts its
// workflows as before.
func Agency(a agency.Agency) temporal.SearchAttributes {
	if a.IsDefault() {
		return temporal.SearchAttributes{}
	}
	return temporal.NewSearchAttributes(AttrAgency.ValueSet(a.ID))
}

// InAgency is the visibility filter of a's workflows.
func InAgency(a agency.Agency) string {
	if a.IsDefault() {
		return fmt.Sprintf(`(%s = %q OR %s IS NULL)`, AttrAgency.GetName(), a.ID, AttrAgency.GetName())
	}
	return fmt.Sprintf(`%s = %q`, AttrAgency.GetName(), a.ID)
}

// Visibility queries over the booking sagas.

// StuckQuery finds a's sagas on this queue published UNKNOWN that
// started before before.
func StuckQuery(a agency.Agency, queue string, before time.Time) string {
	return fmt.Sprintf(`%s AND %s AND TaskQueue = %q AND %s = "UNKNOWN" AND StartTime < %q`,
		runningBookings, InAgency(a), queue, AttrStatus.GetName(), before.UTC().Format(time.RFC3339Nano))
}

// PendingQuery finds this queue's sagas published UNKNOWN, of every
// agency: the deployment's gauge.
func PendingQuery(queue string) string {
	return fmt.Sprintf(`%s AND TaskQueue = %q AND %s = "UNKNOWN"`, runningBookings, queue, AttrStatus.GetName())
}

// LiveQuery finds a's sagas on this queue that answer confirmed or held.
func LiveQuery(a agency.Agency, queue string) string {
	return fmt.Sprintf(`%s AND %s AND TaskQueue = %q AND %s IN ("CONFIRMED", "SELECTED")`, runningBookings, InAgency(a), queue,
		AttrStatus.GetName())
}

// ReleasedQuery finds a's sagas on this queue, running or closed, that
// answered cancelled or rescheduled: a store restored from an older
// backup may hold their bookings live again.
func ReleasedQuery(a agency.Agency, queue string) string {
	return fmt.Sprintf(`WorkflowType = %q AND %s AND TaskQueue = %q AND %s IN ("CANCELLED", "RESCHEDULED")`,
		booking.BookingWorkflowName, InAgency(a), queue, AttrStatus.GetName())
}

// AttentionQuery finds a's sagas an operator should look at: pending,
// confirmed but not mirrored or with a caller who could not be messaged,
// or silent since before silentSince.
func AttentionQuery(a agency.Agency, silentSince time.Time) string {
	return fmt.Sprintf(`%s AND %s AND (%s = "UNKNOWN" OR (%s = "CONFIRMED" AND (%s = false OR %s = false OR %s = false)) OR (%s IS NULL AND StartTime < %q))`,
		runningBookings, InAgency(a), AttrStatus.GetName(), AttrStatus.GetName(), AttrCalendarSynced.GetName(), AttrCRMSynced.GetName(),
		AttrCallerNotified.GetName(), AttrStatus.GetName(), silentSince.UTC().Format(time.RFC3339Nano))
}

// ReferenceQuery finds a's saga that carries a caller's reference.
func ReferenceQuery(a agency.Agency, ref string) string {
	return fmt.Sprintf(`WorkflowType = %q AND %s AND %s = %q`, booking.BookingWorkflowName, InAgency(a), AttrReference.GetName(), ref)
}

var runningBookings = fmt.Sprintf(`WorkflowType = %q AND ExecutionStatus = "Running"`, booking.BookingWorkflowName)

// ForStart is the workflow id, search attributes and priority of a start
// of id that acts for ctx's agency: the id in the agency's space
// (agency.Scoped), the agency's search attribute, and its fairness key
// (Fairness). The agency itself travels in the start's header
// (agencyheader.Propagator). It names no client type, so that the
// workflows, which link no client, share it.
func ForStart(ctx context.Context, id string) (string, temporal.SearchAttributes, temporal.Priority) {
	a := agency.From(ctx)
	return agency.WorkflowID(a, id), Agency(a), Fairness(a)
}

// Fairness is the task priority of a's workflows: the agency is their
// fairness key, so that where the server dispatches fairly
// (matching.enableFairness, off by default in v1.32) one agency's
// backlog of tasks waits behind its own, not another's. Activities and
// children inherit it from their workflow.
func Fairness(a agency.Agency) temporal.Priority { return temporal.Priority{FairnessKey: a.ID} }
