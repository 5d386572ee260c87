// Package visibility holds the booking sagas' search attributes, which an
// operator filters on in the Temporal UI and the service queries, and the
// visibility queries over them. It is Temporal's vocabulary, kept out of
// booking so that the packages that share booking's link no Temporal SDK.
package visibility

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

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
)

// Visibility queries over the booking sagas.

// StuckQuery finds this queue's sagas published UNKNOWN that started
// before before.
func StuckQuery(queue string, before time.Time) string {
	return fmt.Sprintf(`%s AND TaskQueue = %q AND %s = "UNKNOWN" AND StartTime < %q`,
		runningBookings, queue, AttrStatus.GetName(), before.UTC().Format(time.RFC3339Nano))
}

// PendingQuery finds this queue's sagas published UNKNOWN.
func PendingQuery(queue string) string {
	return fmt.Sprintf(`%s AND TaskQueue = %q AND %s = "UNKNOWN"`, runningBookings, queue, AttrStatus.GetName())
}

// LiveQuery finds this queue's sagas that answer confirmed or held.
func LiveQuery(queue string) string {
	return fmt.Sprintf(`%s AND TaskQueue = %q AND %s IN ("CONFIRMED", "SELECTED")`, runningBookings, queue, AttrStatus.GetName())
}

// ReleasedQuery finds this queue's sagas, running or closed, that
// answered cancelled or rescheduled: a store restored from an older
// backup may hold their bookings live again.
func ReleasedQuery(queue string) string {
	return fmt.Sprintf(`WorkflowType = %q AND TaskQueue = %q AND %s IN ("CANCELLED", "RESCHEDULED")`,
		booking.BookingWorkflowName, queue, AttrStatus.GetName())
}

// AttentionQuery finds sagas an operator should look at: pending,
// confirmed but not mirrored or with a caller who could not be messaged,
// or silent since before silentSince.
func AttentionQuery(silentSince time.Time) string {
	return fmt.Sprintf(`%s AND (%s = "UNKNOWN" OR (%s = "CONFIRMED" AND (%s = false OR %s = false OR %s = false)) OR (%s IS NULL AND StartTime < %q))`,
		runningBookings, AttrStatus.GetName(), AttrStatus.GetName(), AttrCalendarSynced.GetName(), AttrCRMSynced.GetName(),
		AttrCallerNotified.GetName(), AttrStatus.GetName(), silentSince.UTC().Format(time.RFC3339Nano))
}

// ReferenceQuery finds the saga that carries a caller's reference.
func ReferenceQuery(ref string) string {
	return fmt.Sprintf(`WorkflowType = %q AND %s = %q`, booking.BookingWorkflowName, AttrReference.GetName(), ref)
}

var runningBookings = fmt.Sprintf(`WorkflowType = %q AND ExecutionStatus = "Running"`, booking.BookingWorkflowName)
