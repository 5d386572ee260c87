package payloadcodec

import (
	"crypto/rand"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/bookingsaga/bookingsaga/agency"
)

const (
	// encoding marks an encrypted payload; the key id names its key.
	encoding = "binary/encrypted"
	keyID    = "encryption-key-id"
)

// Codec is a converter.PayloadCodec over Keys. It encrypts under the
// current key of the agency whose workflow the payload is of
// (WithSerializationContext), the deployment's when it has none.
type Codec struct {
	keys   *Keys
	agency string
}

var (
	_ converter.PayloadCodec                         = (*Codec)(nil)
	_ converter.PayloadCodecWithSerializationContext = (*Codec)(nil)
)

// WithSerializationContext is the codec for a payload of the workflow the
// SDK names (its own, or an activity's): the agency its id is in
// (agency.OfWorkflowID) picks the key that encrypts.
func (c *Codec) WithSerializationContext(sc converter.SerializationContext) converter.PayloadCodec {
	var wid string
	switch x := sc.(type) {
	case converter.WorkflowSerializationContext:
		wid = x.WorkflowID
	case converter.ActivitySerializationContext:
		wid = x.WorkflowID
	}
	return &Codec{keys: c.keys, agency: agency.OfWorkflowID(wid)}
}

// New is the codec for keys.
func New(keys *Keys) *Codec { return &Codec{keys: keys} }

// DataConverter is the default data converter with this codec over it,
// refusing what is not sealed: what a worker or a client reads from
// Temporal (an activity's result, a signal, an update) is then ours, not
// the word of whoever reaches Temporal. A deployment that turns
// encryption on drains its open workflows first (docs/security.md).
func (c *Codec) DataConverter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), sealedOnly{c})
}

// sealedOnly is the codec, refusing a plain payload on the way in.
type sealedOnly struct{ *Codec }

func (s sealedOnly) WithSerializationContext(sc converter.SerializationContext) converter.PayloadCodec {
	return sealedOnly{s.Codec.WithSerializationContext(sc).(*Codec)}
}

func (s sealedOnly) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	for _, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != encoding {
			return nil, fmt.Errorf("decode payload: not sealed under the payload keys (encoding %q): refused", p.GetMetadata()[converter.MetadataEncoding])
		}
	}
	return s.Codec.Decode(payloads)
}

// Encode seals each payload, metadata and all, under the current key, with
// the key id as additional data so that a payload can't be relabelled.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	current := c.keys.currentFor(c.agency)
	aead := c.keys.aeads[current]
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := p.Marshal()
		if err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
		nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(encoding), keyID: []byte(current)},
			Data:     aead.Seal(nonce, nonce, plain, []byte(current)),
		}
	}
	return out, nil
}

// Decode opens each encrypted payload with the key it names; a payload
// that is not encrypted passes through, for the codec server to show it
// (the data converter refuses one: DataConverter).
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != encoding {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[keyID])
		aead, ok := c.keys.aeads[id]
		if !ok {
			return nil, fmt.Errorf("decode payload: no key %q (was it removed before the histories it wrote?)", id)
		}
		data := p.GetData()
		if len(data) < aead.NonceSize() {
			return nil, fmt.Errorf("decode payload: %d bytes is too short", len(data))
		}
		plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], []byte(id))
		if err != nil {
			return nil, fmt.Errorf("decode payload under key %q: %w", id, err)
		}
		out[i] = &commonpb.Payload{}
		if err := out[i].Unmarshal(plain); err != nil {
			return nil, fmt.Errorf("decode payload: %w", err)
		}
	}
	return out, nil
}
