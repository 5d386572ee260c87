package workflows

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/bookingsaga/bookingsaga/booking"
)

// The store's refusal is the run's answer, not its failure, and starts no
// mirror; a store failure is retried until it answers.
func TestAnOutcomeTheStoreRefusesIsAnAnswer(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.env.RegisterWorkflow(Outcome)
	f.env.RegisterWorkflow(MirrorCRM)
	in := booking.OutcomeInput{RequestKey: "k-early", Outcome: booking.OutcomeNoShow}
	rej := booking.Rejectf(booking.CodeOutcomeNotAllowed, "still to come")
	f.env.OnActivity(f.a.RecordOutcome, mock.Anything, in).Return(booking.OutcomeOutput{}, errors.New("connection reset")).Once()
	f.env.OnActivity(f.a.RecordOutcome, mock.Anything, in).Return(booking.OutcomeOutput{}, temporal.NewApplicationErrorWithOptions(
		rej.Error(), booking.ErrTypeRejected, temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{*rej}})).Once()
	f.env.ExecuteWorkflow(Outcome, in)
	require.NoError(t, f.env.GetWorkflowError())
	var out booking.OutcomeOutput
	require.NoError(t, f.env.GetWorkflowResult(&out))
	require.NotNil(t, out.Refused)
	require.Equal(t, booking.CodeOutcomeNotAllowed, out.Refused.Code)
}

// An outcome recorded starts the CRM's mirror under its own id, and the
// run answers without waiting for the CRM.
func TestAnOutcomeRecordedStartsTheCRMMirror(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.env.RegisterWorkflow(Outcome)
	in := booking.OutcomeInput{RequestKey: "k-seen", Outcome: booking.OutcomeAttended}
	b := stored("k-seen", request(slotStart), booking.StatusConfirmed)
	b.Outcome = booking.OutcomeAttended
	f.env.OnActivity(f.a.RecordOutcome, mock.Anything, in).Return(booking.OutcomeOutput{Booking: b, Changed: true}, nil).Once()
	f.env.OnWorkflow(MirrorCRM, mock.Anything, "k-seen").Return(nil).Once()
	f.env.ExecuteWorkflow(Outcome, in)
	require.NoError(t, f.env.GetWorkflowError())
	var out booking.OutcomeOutput
	require.NoError(t, f.env.GetWorkflowResult(&out))
	require.True(t, out.Changed)
	require.Nil(t, out.Refused)
}
