package app

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

	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/payloadcodec"
)

// setup serves the codec with an ops key, an agent key and a UI token,
// and returns a decode call and a body to decode.
func codecSetup(t *testing.T) (url string, keys map[apikey.Scope]string, body []byte) {
	t.Helper()
	dir := t.TempDir()
	_, err := payloadcodec.AddKey(filepath.Join(dir, "payload-keys.json"), "")
	require.NoError(t, err)
	pk, err := payloadcodec.LoadKeys(filepath.Join(dir, "payload-keys.json"))
	require.NoError(t, err)
	codec := payloadcodec.New(pk)
	keys = map[apikey.Scope]string{}
	for _, scope := range []apikey.Scope{apikey.ScopeOps, apikey.ScopeAgent} {
		secret, k, err := apikey.NewKey(string(scope), scope)
		require.NoError(t, err)
		require.NoError(t, apikey.SaveKey(filepath.Join(dir, "api-keys.json"), k, false))
		keys[scope] = secret
	}
	h, err := Codec{Codec: codec, KeysFile: filepath.Join(dir, "api-keys.json"), UIToken: "ui-secret", Namespace: "default"}.Handler()
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
	url, keys, body := codecSetup(t)
	for _, tc := range []struct {
		path, auth string
		want       int
	}{
		{"/decode", "Bearer " + keys[apikey.ScopeOps], http.StatusOK},
		{"/decode", "Bearer " + keys[apikey.ScopeAgent], http.StatusUnauthorized},
		{"/decode", "", http.StatusUnauthorized},
		{"/ui-secret/decode", "", http.StatusOK},
		{"/ui-guess/decode", "", http.StatusUnauthorized},
	} {
		require.Equal(t, tc.want, decode(t, url+tc.path, tc.auth, body), "%s %q", tc.path, tc.auth)
	}
}

func TestACodecOpenToAnyoneIsRefused(t *testing.T) {
	t.Parallel()
	_, err := Codec{}.Handler()
	require.ErrorContains(t, err, "payload keys")
	file := filepath.Join(t.TempDir(), "payload-keys.json")
	_, err = payloadcodec.AddKey(file, "")
	require.NoError(t, err)
	pk, err := payloadcodec.LoadKeys(file)
	require.NoError(t, err)
	_, err = Codec{Codec: payloadcodec.New(pk)}.Handler()
	require.ErrorContains(t, err, "open to anyone")
}
