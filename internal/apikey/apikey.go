// Package apikey holds the API keys: their scopes, how they are made and
// stored (hashed), and the keyring that the agent API and the codec server
// both check bearer tokens against.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bookingsaga/bookingsaga/agency"
)

// Scope is what an API key may do.
type Scope string

const (
	// ScopeAgent books: availability, intents, bookings, their status,
	// cancel and reschedule, and the voice tools.
	ScopeAgent Scope = "agent"
	// ScopeAdmin changes the catalogue: resources and policy.
	ScopeAdmin Scope = "admin"
	// ScopeOps reads what operators read: attention lists and timelines.
	ScopeOps Scope = "ops"
	// ScopePlatform makes and lists the deployment's agencies, and
	// nothing else: a platform key belongs to no agency, and books,
	// reads and changes no agency's data.
	ScopePlatform Scope = "platform"
)

func (s Scope) valid() bool {
	return s == ScopeAgent || s == ScopeAdmin || s == ScopeOps || s == ScopePlatform
}

// Key is one API key as stored: its name (which logs and metrics show),
// its scopes, the agency it acts for, and the SHA-256 of its secret,
// never the secret itself. The secret is 160 random bits, so a plain hash
// is enough to make a leaked keys file useless; there is nothing to
// brute-force.
type Key struct {
	Name   string  `json:"name"`
	Scopes []Scope `json:"scopes"`
	// Agency is the id of the agency every call under the key acts for;
	// none is the default agency (a deployment of one agency, and every
	// key made before agencies). A call never names its agency itself.
	Agency string `json:"agency,omitempty"`
	Hash   string `json:"sha256"`
}

func (k Key) Allows(s Scope) bool { return slices.Contains(k.Scopes, s) }

// NewKey makes a key: the secret to hand out once, and what to store.
func NewKey(name string, scopes ...Scope) (secret string, k Key, err error) {
	k = Key{Name: name, Scopes: scopes}
	if err := k.validate(); err != nil {
		return "", Key{}, err
	}
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", Key{}, fmt.Errorf("new key: %w", err)
	}
	secret = "bsk_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
	k.Hash = hashSecret(secret)
	return secret, k, nil
}

func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

func (k Key) validate() error {
	switch {
	// "@" names a platform's signed calls at an agency ("retell@lyon"),
	// "/" a key's conversations ("key/call"): no key may take either.
	case k.Name == "" || len(k.Name) > 64 || strings.ContainsAny(k.Name, " \t\n@/"):
		return fmt.Errorf("key name %q must be 1 to 64 characters without spaces, @ or /", k.Name)
	case len(k.Scopes) == 0:
		return fmt.Errorf("key %s: at least one scope (agent, admin, ops, platform) is required", k.Name)
	}
	for _, s := range k.Scopes {
		if !s.valid() {
			return fmt.Errorf("key %s: unknown scope %q (agent, admin, ops, platform)", k.Name, s)
		}
	}
	if k.Allows(ScopePlatform) && (len(k.Scopes) > 1 || k.Agency != "") {
		return fmt.Errorf("key %s: a platform key has the platform scope alone and no agency: it manages agencies, and acts in none", k.Name)
	}
	if k.Agency != "" {
		if err := agency.ValidID(k.Agency); err != nil {
			return fmt.Errorf("key %s: %w", k.Name, err)
		}
	}
	return nil
}

// Keyring is the set of valid keys, read from a JSON file of Keys. The
// file is read again when it changes, so a key is added or revoked (a
// rotation: add the new key, move the clients, remove the old) without a
// restart.
type Keyring struct {
	path string

	mu   sync.Mutex
	keys []Key
	// digest is the SHA-256 of the file last read: a key replaced under
	// its name leaves the size alone, and the modification time may be
	// the same on a coarse clock, so only the bytes tell.
	digest  [sha256.Size]byte
	checked time.Time
}

// LoadKeyring reads path; a missing or malformed file is an error, so a
// typo never leaves the API open.
func LoadKeyring(path string) (*Keyring, error) {
	k := &Keyring{path: path}
	if err := k.reload(); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *Keyring) reload() error {
	data, err := os.ReadFile(k.path)
	if err != nil {
		return fmt.Errorf("api keys: %w", err)
	}
	digest := sha256.Sum256(data)
	if digest == k.digest && k.keys != nil {
		return nil
	}
	var keys []Key
	if err := json.Unmarshal(data, &keys); err != nil {
		return fmt.Errorf("api keys %s: %w", k.path, err)
	}
	seen := map[string]bool{}
	for _, key := range keys {
		if err := key.validate(); err != nil {
			return fmt.Errorf("api keys %s: %w", k.path, err)
		}
		if len(key.Hash) != 64 || seen[key.Name] {
			return fmt.Errorf("api keys %s: key %s needs a unique name and a sha256 of 64 hex digits", k.path, key.Name)
		}
		seen[key.Name] = true
	}
	if keys == nil {
		keys = []Key{}
	}
	k.keys, k.digest = keys, digest
	return nil
}

// Allows reports whether secret is a valid key with scope s: for servers
// beside the API (the codec server) that take the same keys.
func (k *Keyring) Allows(secret string, s Scope) bool {
	key, err := k.Find(secret)
	return err == nil && key.Allows(s)
}

// errNoKey is a secret that matches no key.
var errNoKey = errors.New("no such key")

// Find returns the key whose secret this is. The file is looked at again
// at most once a second; if it has become unreadable, the keys last read
// stay in force (and the error is returned for the log).
func (k *Keyring) Find(secret string) (Key, error) {
	k.mu.Lock()
	var reloadErr error
	if time.Since(k.checked) > time.Second {
		k.checked = time.Now()
		reloadErr = k.reload()
	}
	keys := k.keys
	k.mu.Unlock()
	h := []byte(hashSecret(secret))
	for _, key := range keys {
		if subtle.ConstantTimeCompare(h, []byte(key.Hash)) == 1 {
			return key, nil
		}
	}
	return Key{}, errors.Join(errNoKey, reloadErr)
}

// SaveKey adds k to the keys file at path, creating it (0600) if need be.
// A key of the same name is replaced when replace is set, and is an error
// otherwise.
func SaveKey(path string, k Key, replace bool) error {
	if err := k.validate(); err != nil {
		return err
	}
	var keys []Key
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("api keys: %w", err)
	default:
		if err := json.Unmarshal(data, &keys); err != nil {
			return fmt.Errorf("api keys %s: %w", path, err)
		}
	}
	kept := keys[:0]
	for _, old := range keys {
		if old.Name == k.Name && !replace {
			return fmt.Errorf("api keys %s: a key named %s exists; remove it first or pick another name", path, k.Name)
		}
		if old.Name != k.Name {
			kept = append(kept, old)
		}
	}
	out, err := json.MarshalIndent(append(kept, k), "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(out, '\n'), 0o600); err != nil {
		return fmt.Errorf("api keys: %w", err)
	}
	return os.Rename(tmp, path)
}
