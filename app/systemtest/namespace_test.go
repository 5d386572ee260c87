package systemtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/bookingsaga/bookingsaga/app"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// TestAWorkerMakesItsNamespaceWhole: started against a namespace that does
// not exist yet, the worker's start-up creates it and its search
// attributes, so its sagas can publish their status.
func TestAWorkerMakesItsNamespaceWhole(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := "ns-" + uuid.NewString()[:8]
	c, err := client.NewClientFromExisting(temporalServer().GetDefaultClient(), client.Options{Namespace: ns})
	require.NoError(t, err)

	require.NoError(t, app.EnsureNamespace(ctx, c, ns))
	require.NoError(t, app.EnsureNamespace(ctx, c, ns), "a second start changes nothing")
	require.Eventually(t, func() bool { return app.EnsureSearchAttributes(ctx, c, ns) == nil }, 30*time.Second, 200*time.Millisecond,
		"the new namespace is served and takes the attributes")
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
	require.NoError(t, err)
	for name, kind := range app.SearchAttributes() {
		require.Equal(t, kind, have.GetCustomAttributes()[name], name)
	}
}

// TestAHalfConfiguredNamespaceIsRefusedWithTheFix: where the attributes
// can't be added, start-up fails with the one command that adds them.
func TestAHalfConfiguredNamespaceIsRefusedWithTheFix(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	missing := "no-such-namespace-" + uuid.NewString()[:8]
	err := app.EnsureSearchAttributes(ctx, temporalServer().GetDefaultClient(), missing)
	require.Error(t, err)
	var nf *serviceerror.NamespaceNotFound
	require.False(t, errors.As(err, &nf) && err.Error() == nf.Error(), "the error is ours, with the fix")
	require.Contains(t, err.Error(), "temporal operator search-attribute create --namespace "+missing)
	require.Contains(t, err.Error(), "--name BookingStatus --type Keyword")
	require.Contains(t, err.Error(), "--name BookingSlotStart --type Datetime")
	require.Equal(t, enums.INDEXED_VALUE_TYPE_KEYWORD, app.SearchAttributes()["BookingReference"])
}
