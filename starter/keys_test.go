package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// `keys payload -agency` gives an agency a current key of its own beside
// the deployment's, which must come first; a malformed agency id writes
// nothing.
func TestAnAgencyGetsPayloadKeysOfItsOwn(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "payload-keys.json")
	var out bytes.Buffer
	require.ErrorContains(t, keys([]string{"payload", "-file", file, "-agency", "lyon"}, &out), "add the deployment's key first")
	_, err := os.Stat(file)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing written")
	require.NoError(t, keys([]string{"payload", "-file", file}, &out))
	require.NoError(t, keys([]string{"payload", "-file", file, "-agency", "lyon"}, &out))
	require.Contains(t, out.String(), "agency lyon's current key")
	require.ErrorContains(t, keys([]string{"payload", "-file", file, "-agency", "Lyon Sud"}, &out), "agency id")

	var f struct {
		Current  string            `json:"current"`
		Agencies map[string]string `json:"agencies"`
		Keys     map[string]string `json:"keys"`
	}
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &f))
	require.Len(t, f.Keys, 2)
	require.NotEqual(t, f.Current, f.Agencies["lyon"])
	require.Contains(t, f.Keys, f.Agencies["lyon"])
}
