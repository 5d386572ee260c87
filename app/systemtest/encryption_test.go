package systemtest

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bookingsaga/bookingsaga/app"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/payloadcodec"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
)

const adaName, adaPhone = "Ada Lovelace", "+33 6 12 34 56 78"

// sealedAPI is the agent API over clients that encrypt payloads with the
// namespace's codec, as the dev stack and Compose run it.
type sealedAPI struct {
	*fixture
	url   string
	codec *payloadcodec.Codec
}

func setupSealed(t *testing.T) sealedAPI {
	f := setup(t)
	keysFile := filepath.Join(t.TempDir(), "payload-keys.json")
	_, err := payloadcodec.AddKey(keysFile, "")
	require.NoError(t, err)
	keys, err := payloadcodec.LoadKeys(keysFile)
	require.NoError(t, err)
	codec := payloadcodec.New(keys)
	sealed := temporalServer().NewClientWithOptions(client.Options{DataConverter: codec.DataConverter()})
	queue := f.queue + "-sealed"
	w := worker.New(sealed, queue, worker.Options{})
	app.Register(w, f.acts)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	vault := store.New(f.pool, store.Config{})
	sc := desk.New(sealed, f.catalog, desk.Options{Sagas: sagaclient.Options{TaskQueue: queue, Settings: f.settings, Contacts: vault}})
	srv := httptest.NewServer(app.Edge(sc, app.EdgeConfig{Config: edge.Config{Keys: apiKeys, Settings: edge.Settings{Catalogue: f.catalog}}, REST: api.Config{Contacts: vault}}))
	t.Cleanup(srv.Close)
	return sealedAPI{fixture: f, url: srv.URL, codec: codec}
}

// book books a slot with Ada's contact through the API.
func (s sealedAPI) book(hour int) string {
	key := uuid.NewString()
	body := bookingBody(key, slot(s.t, hour))
	body.Contact = &edge.Contact{Name: adaName, Phone: adaPhone}
	var r receipt.Receipt
	require.Equal(s.t, http.StatusOK, s.call("POST", s.url+"/v1/bookings", body, &r))
	require.Equal(s.t, receipt.StatusConfirmed, r.Status)
	return key
}

// history reads a saga's history raw from the Temporal server, as its
// gRPC API gives it to anyone who can reach it: no codec.
func (s sealedAPI) history(key string) *history.History {
	h := &history.History{}
	it := s.client.GetWorkflowHistory(s.ctx, key, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(s.t, err)
		h.Events = append(h.Events, ev)
	}
	return h
}

// sealedCopy is the contact as the codec decodes it from the history's
// update arguments: the box sealed under the booking's data key.
func (s sealedAPI) sealedCopy(h *history.History) []byte {
	for _, ev := range h.Events {
		in := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput().GetArgs()
		if in == nil {
			continue
		}
		plain, err := s.codec.Decode(in.GetPayloads())
		require.NoError(s.t, err, "the codec decodes the history")
		for _, p := range plain {
			var req booking.CommitRequest
			if json.Unmarshal(p.GetData(), &req) == nil && req.Contact != nil {
				require.False(s.t, req.Contact.HasPlain(), "the decoded history holds the contact sealed only")
				return req.Contact.Sealed
			}
		}
	}
	s.t.Fatal("no contact in the history's update arguments")
	return nil
}

// openWithVault opens a sealed copy as anyone holding the store's data
// key could: it returns "" when the key is gone.
func (s sealedAPI) openWithVault(key string, box []byte) string {
	var dek []byte
	require.NoError(s.t, s.pool.QueryRow(s.ctx, "SELECT data_key FROM vault.contact_key WHERE request_key = $1", key).Scan(&dek))
	if dek == nil {
		return ""
	}
	block, err := aes.NewCipher(dek)
	require.NoError(s.t, err)
	aead, err := cipher.NewGCM(block)
	require.NoError(s.t, err)
	plain, err := aead.Open(nil, box[1:1+aead.NonceSize()], box[1+aead.NonceSize():], []byte(key))
	require.NoError(s.t, err)
	return string(plain)
}

// TestHistoriesHoldNoContactInPlainText books with a caller's name and
// phone, reads the saga's history raw from the Temporal server and finds
// neither; the codec reads the same history back, and the contact in it
// opens with the booking's data key.
func TestHistoriesHoldNoContactInPlainText(t *testing.T) {
	t.Parallel()
	s := setupSealed(t)
	key := s.book(16)
	h := s.history(key)
	raw, err := proto.Marshal(h) // the wire form: payload bytes as stored
	require.NoError(t, err)
	for _, secret := range []string{"Lovelace", "12 34 56 78"} {
		require.NotContains(t, string(raw), secret, "in plain text in the history")
	}
	require.Contains(t, s.openWithVault(key, s.sealedCopy(h)), adaName)
}

// TestErasureLeavesNoReadableCopy erases a booking's contact through the
// API: the store answers 410, the history's copy no longer opens, the
// booking stands, and the event log records the erasure without the data.
func TestErasureLeavesNoReadableCopy(t *testing.T) {
	t.Parallel()
	s := setupSealed(t)
	key := s.book(17)
	var got api.ContactAnswer
	require.Equal(t, http.StatusOK, s.call("GET", s.url+"/v1/bookings/"+key+"/contact", nil, &got))
	require.Equal(t, adaPhone, got.Contact.Phone)

	require.Equal(t, http.StatusOK, s.call("DELETE", s.url+"/v1/bookings/"+key+"/contact", nil, &got))
	require.True(t, got.Erased)
	require.Equal(t, http.StatusOK, s.call("DELETE", s.url+"/v1/bookings/"+key+"/contact", nil, &got), "an erasure repeats safely")

	var e edge.Error
	require.Equal(t, http.StatusGone, s.call("GET", s.url+"/v1/bookings/"+key+"/contact", nil, &e))
	require.Equal(t, "contact_erased", e.Code)
	require.Empty(t, s.openWithVault(key, s.sealedCopy(s.history(key))), "the history's copy has no key left")
	var rows int
	require.NoError(t, s.pool.QueryRow(s.ctx, "SELECT count(*) FROM booking_contact").Scan(&rows))
	require.Zero(t, rows)

	var r receipt.Receipt
	require.Equal(t, http.StatusOK, s.call("GET", s.url+"/v1/bookings/"+key, nil, &r))
	require.Equal(t, receipt.StatusConfirmed, r.Status, "the booking stands")
	var kinds []string
	rows2, err := s.pool.Query(s.ctx, "SELECT kind, detail::text FROM booking_event WHERE request_key = $1", key)
	require.NoError(t, err)
	for rows2.Next() {
		var kind, detail string
		require.NoError(t, rows2.Scan(&kind, &detail))
		require.NotContains(t, detail, "Lovelace")
		kinds = append(kinds, kind)
	}
	require.NoError(t, rows2.Err())
	require.Equal(t, 1, strings.Count(strings.Join(kinds, " "), "contact_erased"))

	require.Equal(t, http.StatusNotFound, s.call("DELETE", s.url+"/v1/bookings/"+uuid.NewString()+"/contact", nil, &e))
	require.Equal(t, "no_contact", e.Code)
}

// TestOnlyAdminsReadOrEraseContacts: an agent key can book with a contact
// but neither read nor erase one.
func TestOnlyAdminsReadOrEraseContacts(t *testing.T) {
	t.Parallel()
	s := setupSealed(t)
	key := s.book(18)
	secret, keys := agentKey(t, "agent-only")
	url := s.serveAPI(app.EdgeConfig{Config: edge.Config{Keys: keys}})
	for _, method := range []string{"GET", "DELETE"} {
		var e edge.Error
		require.Equal(t, http.StatusForbidden, s.call(method, url+"/v1/bookings/"+key+"/contact", nil, &e, "Authorization", "Bearer "+secret))
		require.Equal(t, "wrong_scope", e.Code)
	}
}

// TestAHoldConfirmedByBookKeepsItsContact: the contact a caller gives
// with the book that confirms their hold reaches the store.
func TestAHoldConfirmedByBookKeepsItsContact(t *testing.T) {
	t.Parallel()
	s := setupSealed(t)
	var held api.IntentAnswer
	require.Equal(t, http.StatusOK, s.call("POST", s.url+"/v1/intents", api.IntentBody{ConversationID: "call-" + uuid.NewString(),
		Slot: bookingBody("", slot(t, 15)).Slot, Hold: true, ExpectedPolicyVersion: policyVersion}, &held))
	require.Equal(t, receipt.StatusHeld, held.Hold.Status)

	body := bookingBody(held.RequestKey, slot(t, 15))
	body.Contact = &edge.Contact{Name: adaName, Phone: adaPhone}
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, s.call("POST", s.url+"/v1/bookings", body, &r))
	require.Equal(t, receipt.StatusConfirmed, r.Status)

	var got api.ContactAnswer
	require.Equal(t, http.StatusOK, s.call("GET", s.url+"/v1/bookings/"+held.RequestKey+"/contact", nil, &got))
	require.Equal(t, adaPhone, got.Contact.Phone)
	require.Equal(t, adaName, got.Contact.Name)
}
