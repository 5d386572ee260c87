package codecserve

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/payloadcodec"
)

// setup serves the codec with an ops key, an agent key and a UI token,
// and returns a decode call and a body to decode.
func setup(t *testing.T) (url string, keys map[api.Scope]string, body []byte) {
	t.Helper()
	dir := t.TempDir()
	_, err := payloadcodec.AddKey(filepath.Join(dir, "payload-keys.json"))
	require.NoError(t, err)
	pk, err := payloadcodec.LoadKeys(filepath.Join(dir, "payload-keys.json"))
	require.NoError(t, err)
	codec := payloadcodec.New(pk)
	keys = map[api.Scope]string{}
	for _, scope := range []api.Scope{api.ScopeOps, api.ScopeAgent} {
		secret, k, err := api.NewKey(string(scope), scope)
		require.NoError(t, err)
		require.NoError(t, api.SaveKey(filepath.Join(dir, "api-keys.json"), k, false))
		keys[scope] = secret
	}
	h, err := Handler(Config{Codec: codec, KeysFile: filepath.Join(dir, "api-keys.json"), UIToken: "ui-secret", Namespace: "default"})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	p, err := converter.GetDefaultDataConverter().ToPayload("Ada Lovelace")
	require.NoError(t, err)
	enc, err := codec.Encode([]*commonpb.Payload{p})
	require.NoError(t, err)
	body, err = protojson.Marshal(&commonpb.Payloads{Payloads: enc})
	require.NoError(t, err)
	return srv.URL, keys, body
}

func decode(t *testing.T, url, auth string, body []byte) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Namespace", "default")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	return res.StatusCode
}

func TestOnlyOpsKeysAndTheUITokenDecode(t *testing.T) {
	t.Parallel()
	url, keys, body := setup(t)
	for _, tc := range []struct {
		path, auth string
		want       int
	}{
		{"/decode", "Bearer " + keys[api.ScopeOps], http.StatusOK},
		{"/decode", "Bearer " + keys[api.ScopeAgent], http.StatusUnauthorized},
		{"/decode", "", http.StatusUnauthorized},
		{"/ui-secret/decode", "", http.StatusOK},
		{"/ui-guess/decode", "", http.StatusUnauthorized},
	} {
		require.Equal(t, tc.want, decode(t, url+tc.path, tc.auth, body), "%s %q", tc.path, tc.auth)
	}
}

func TestACodecOpenToAnyoneIsRefused(t *testing.T) {
	t.Parallel()
	_, err := Handler(Config{})
	require.ErrorContains(t, err, "payload keys")
	file := filepath.Join(t.TempDir(), "payload-keys.json")
	_, err = payloadcodec.AddKey(file)
	require.NoError(t, err)
	pk, err := payloadcodec.LoadKeys(file)
	require.NoError(t, err)
	_, err = Handler(Config{Codec: payloadcodec.New(pk)})
	require.ErrorContains(t, err, "open to anyone")
}
