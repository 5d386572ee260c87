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
// so histories written before a rotation stay readable.
type Keys struct {
	current string
	aeads   map[string]cipher.AEAD
}

// keysFile is the file's shape: {"current": id, "keys": {id: base64}}.
type keysFile struct {
	Current string            `json:"current"`
	Keys    map[string]string `json:"keys"`
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
	k := &Keys{current: f.Current, aeads: map[string]cipher.AEAD{}}
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
	return k, nil
}

// AddKey puts a new random key in the file at path (created 0600 if
// missing) and makes it the current one; the old keys stay, to read what
// they wrote. The id is the date and time, so ids sort by age.
func AddKey(path string) (id string, err error) {
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
	f.Keys[id], f.Current = base64.StdEncoding.EncodeToString(raw), id
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
