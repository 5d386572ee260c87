package payloadcodec

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
)

const secret = "+33 6 12 34 56 78, Ada Lovelace"

// setup makes a keys file with one key and a codec over it.
func setup(t *testing.T) (string, *Codec) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "payload-keys.json")
	_, err := AddKey(path, "")
	require.NoError(t, err)
	keys, err := LoadKeys(path)
	require.NoError(t, err)
	return path, New(keys)
}

func payload(t *testing.T, v any) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	require.NoError(t, err)
	return p
}

func TestPayloadsAreSealedAndOpenAgain(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	enc, err := c.Encode([]*commonpb.Payload{payload(t, secret)})
	require.NoError(t, err)
	require.NotContains(t, string(enc[0].Data), "Lovelace")
	require.Equal(t, encoding, string(enc[0].Metadata[converter.MetadataEncoding]))
	dec, err := c.Decode(enc)
	require.NoError(t, err)
	var got string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(dec[0], &got))
	require.Equal(t, secret, got)

	plain := payload(t, "written before encryption")
	dec, err = c.Decode([]*commonpb.Payload{plain})
	require.NoError(t, err)
	require.Equal(t, plain, dec[0], "a plain payload passes through")

	enc[0].Data[len(enc[0].Data)-1] ^= 1
	_, err = c.Decode(enc)
	require.Error(t, err, "a tampered payload")
}

func TestARotatedKeyStillReadsWhatItWrote(t *testing.T) {
	t.Parallel()
	path, old := setup(t)
	enc, err := old.Encode([]*commonpb.Payload{payload(t, secret)})
	require.NoError(t, err)
	_, err = AddKey(path, "")
	require.NoError(t, err)
	keys, err := LoadKeys(path)
	require.NoError(t, err)
	rotated := New(keys)
	dec, err := rotated.Decode(enc)
	require.NoError(t, err)
	var got string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(dec[0], &got))
	require.Equal(t, secret, got)
	fresh, err := rotated.Encode([]*commonpb.Payload{payload(t, secret)})
	require.NoError(t, err)
	require.NotEqual(t, string(enc[0].Metadata[keyID]), string(fresh[0].Metadata[keyID]), "new payloads use the new key")
}

func TestTheCodecServerAnswersTheWebUIAndNobodyElse(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	const ui, token = "http://localhost:8233", "bsk_ops"
	srv := httptest.NewServer(Server(c, ServerOptions{Origins: []string{ui}, Namespace: "default",
		Authorize: func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+token }}))
	t.Cleanup(srv.Close)
	enc, err := c.Encode([]*commonpb.Payload{payload(t, secret)})
	require.NoError(t, err)
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: enc})
	require.NoError(t, err)

	// The browser's preflight, then the call, as the Web UI makes them.
	pre, err := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
	require.NoError(t, err)
	pre.Header.Set("Origin", ui)
	pre.Header.Set("Access-Control-Request-Method", "POST")
	pre.Header.Set("Access-Control-Request-Headers", "content-type,x-namespace,authorization")
	res, err := http.DefaultClient.Do(pre)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, ui, res.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, res.Header.Get("Access-Control-Allow-Headers"), "X-Namespace")

	call := func(auth, ns string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/decode", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Origin", ui)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Namespace", ns)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		var out struct {
			Payloads []struct {
				Data []byte `json:"data"`
			} `json:"payloads"`
		}
		_ = json.NewDecoder(res.Body).Decode(&out)
		var data []string
		for _, p := range out.Payloads {
			data = append(data, string(p.Data))
		}
		return res.StatusCode, strings.Join(data, "")
	}
	code, data := call("Bearer "+token, "default")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, data, "Lovelace", "decoded for the operator")
	code, data = call("", "default")
	require.Equal(t, http.StatusUnauthorized, code)
	require.NotContains(t, data, "Lovelace")
	code, _ = call("Bearer "+token, "other")
	require.Equal(t, http.StatusForbidden, code)
	// The Temporal CLI without -n sends X-Namespace empty: the one
	// namespace this codec serves, as the CLI's own default is.
	code, data = call("Bearer "+token, "")
	require.Equal(t, http.StatusOK, code, "an empty X-Namespace")
	require.Contains(t, data, "Lovelace")
}

// What a worker or an API reads through the data converter must be sealed
// under the keys: anyone who reaches Temporal could otherwise complete an
// activity (the saga's store lookup among them) or send a signal with a
// plaintext answer the saga would take as ours. The codec server, which
// only shows payloads, still shows a plain one.
func TestTheDataConverterRefusesAPlainPayload(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	dc := c.DataConverter()
	var got string
	forged := payload(t, `{"Found":true}`)
	require.ErrorContains(t, dc.FromPayload(forged, &got), "not sealed")
	sealed, err := dc.ToPayload(secret)
	require.NoError(t, err)
	require.NoError(t, dc.FromPayload(sealed, &got))
	require.Equal(t, secret, got)
}

// An agency with keys of its own has its workflows' payloads, and their
// activities', sealed under its current key; another agency's, and the
// default's, stay under the deployment's. Each opens again.
func TestAnAgencysPayloadsAreSealedUnderItsOwnKey(t *testing.T) {
	t.Parallel()
	path, _ := setup(t)
	lyonKey, err := AddKey(path, "lyon")
	require.NoError(t, err)
	keys, err := LoadKeys(path)
	require.NoError(t, err)
	c := New(keys)
	for _, tc := range []struct {
		sc   converter.SerializationContext
		lyon bool
	}{
		{converter.WorkflowSerializationContext{WorkflowID: "agency:lyon:k1"}, true},
		{converter.ActivitySerializationContext{WorkflowID: "agency:lyon:caller-messages:q"}, true},
		{converter.WorkflowSerializationContext{WorkflowID: "k1"}, false},
		{converter.WorkflowSerializationContext{WorkflowID: "agency:nantes:k1"}, false},
	} {
		enc, err := c.WithSerializationContext(tc.sc).Encode([]*commonpb.Payload{payload(t, secret)})
		require.NoError(t, err)
		require.Equal(t, tc.lyon, string(enc[0].Metadata[keyID]) == lyonKey, "%+v", tc.sc)
		dec, err := c.Decode(enc)
		require.NoError(t, err)
		var got string
		require.NoError(t, converter.GetDefaultDataConverter().FromPayload(dec[0], &got))
		require.Equal(t, secret, got)
	}
	// Through the data converter, as the SDK hands it each payload's
	// workflow.
	dc := converter.WithDataConverterSerializationContext(c.DataConverter(), converter.WorkflowSerializationContext{WorkflowID: "agency:lyon:k1"})
	p, err := dc.ToPayload(secret)
	require.NoError(t, err)
	require.Equal(t, lyonKey, string(p.Metadata[keyID]))
}
