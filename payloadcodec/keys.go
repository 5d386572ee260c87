// Package payloadcodec encrypts every Temporal payload bookingsaga writes
// (workflow inputs, update arguments, results, query answers) with
// AES-256-GCM, so that Temporal's history holds no contact detail in plain
// text; and serves the Temporal codec server protocol, so that an
// authorised operator's Web UI or CLI can read them.
package payloadcodec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// Keys are the payload keys: the current one encrypts, every one decrypts,
// so histories written before a rotation stay readable. An agency with
// keys of its own has a current key of its own, which encrypts its
// workflows' payloads (Codec.WithSerializationContext): its rotation,
// or its keys destroyed with its data, touch no other agency's.
type Keys struct {
	current  string
	agencies map[string]string // agency id to its current key id
	aeads    map[string]cipher.AEAD
}

// keysFile is the file's shape: {"current": id, "agencies": {agency:
// id}, "keys": {id: base64}}.
type keysFile struct {
	Current  string            `json:"current"`
	Agencies map[string]string `json:"agencies,omitempty"`
	Keys     map[string]string `json:"keys"`
}

// currentFor is the id of the key that encrypts agency's payloads: its
// own current key, or the deployment's ("" is the default agency).
func (k *Keys) currentFor(agency string) string {
	if id, ok := k.agencies[agency]; ok {
		return id
	}
	return k.current
}

// LoadKeys reads a keys file.
func LoadKeys(path string) (*Keys, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("payload keys: %w", err)
	}
	var f keysFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("payload keys %s: %w", path, err)
	}
	k := &Keys{current: f.Current, agencies: f.Agencies, aeads: map[string]cipher.AEAD{}}
	for id, b64 := range f.Keys {
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(raw) != 32 {
			return nil, fmt.Errorf("payload keys %s: key %q must be 32 bytes in base64", path, id)
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, err
		}
		if k.aeads[id], err = cipher.NewGCM(block); err != nil {
			return nil, err
		}
	}
	if _, ok := k.aeads[k.current]; !ok {
		return nil, fmt.Errorf("payload keys %s: the current key %q is not among the keys", path, f.Current)
	}
	for a, id := range k.agencies {
		if _, ok := k.aeads[id]; !ok {
			return nil, fmt.Errorf("payload keys %s: agency %s's current key %q is not among the keys", path, a, id)
		}
	}
	return k, nil
}

// AddKey puts a new random key in the file at path (created 0600 if
// missing) and makes it the current one of agency ("" for the
// deployment's, which the default agency and every agency without keys of
// its own use); the old keys stay, to read what they wrote. The id is the
// date and time, so ids sort by age.
func AddKey(path, agency string) (id string, err error) {
	var f keysFile
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		f.Keys = map[string]string{}
	case err != nil:
		return "", fmt.Errorf("payload keys: %w", err)
	default:
		if err := json.Unmarshal(data, &f); err != nil {
			return "", fmt.Errorf("payload keys %s: %w", path, err)
		}
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	id = time.Now().UTC().Format("20060102T150405.000000000Z")
	f.Keys[id] = base64.StdEncoding.EncodeToString(raw)
	if agency == "" {
		f.Current = id
	} else {
		if f.Agencies == nil {
			f.Agencies = map[string]string{}
		}
		f.Agencies[agency] = id
	}
	if f.Current == "" {
		return "", fmt.Errorf("payload keys %s: add the deployment's key first (no -agency)", path)
	}
	out, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return "", err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(out, '\n'), 0o600); err != nil {
		return "", fmt.Errorf("payload keys: %w", err)
	}
	return id, os.Rename(tmp, path)
}
