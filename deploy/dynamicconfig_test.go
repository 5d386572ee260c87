package deploy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"

	"github.com/bookingsaga/bookingsaga/app/devstack"
)

// The compose Temporal server runs the dev stack's dynamic configuration,
// fairness by agency among it: the file it mounts, read as the server
// reads it, holds every setting the dev stack's embedded server has.
func TestComposeServerRunsTheDevStacksDynamicConfig(t *testing.T) {
	t.Parallel()
	p := setup(t)
	temporal, err := p.GetService("temporal")
	require.NoError(t, err)
	path := *temporal.Environment["DYNAMIC_CONFIG_FILE_PATH"]
	var file string
	for _, v := range temporal.Volumes {
		if v.Target == path {
			file = v.Source
		}
	}
	require.NotEmpty(t, file, "the server's dynamic config file is mounted at %s", path)
	done := make(chan any)
	t.Cleanup(func() { close(done) })
	fc, err := dynamicconfig.NewFileBasedClient(&dynamicconfig.FileBasedClientConfig{Filepath: file, PollInterval: time.Minute},
		log.NewNoopLogger(), done)
	require.NoError(t, err)
	want := devstack.DynamicConfig()
	require.NotEmpty(t, want)
	for key, values := range want {
		got := fc.GetValue(key)
		require.Len(t, got, 1, "%s", key)
		require.EqualValues(t, values, got[0].Value, "%s", key)
	}
}
