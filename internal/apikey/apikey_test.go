// The tests are in package apikey only to make a Keyring look at its file
// again at once (recheck) rather than sleep past its one-second throttle.
package apikey

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recheck makes kr's next Find read its file again, as it does once a second.
func recheck(kr *Keyring) {
	kr.mu.Lock()
	kr.checked = time.Time{}
	kr.mu.Unlock()
}

func newKey(t *testing.T, name string, scopes ...Scope) (string, Key) {
	t.Helper()
	secret, k, err := NewKey(name, scopes...)
	require.NoError(t, err)
	return secret, k
}

func writeKeys(t *testing.T, path string, keys ...Key) {
	t.Helper()
	data, err := json.Marshal(keys)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
}

func TestAKeyMayDoWhatItsScopesSay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		scopes            []Scope
		agent, admin, ops bool
	}{
		{"agent", []Scope{ScopeAgent}, true, false, false},
		{"admin", []Scope{ScopeAdmin}, false, true, false},
		{"ops", []Scope{ScopeOps}, false, false, true},
		{"agent and ops", []Scope{ScopeAgent, ScopeOps}, true, false, true},
		{"all", []Scope{ScopeOps, ScopeAdmin, ScopeAgent}, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, k := newKey(t, "k", tt.scopes...)
			require.Equal(t, tt.agent, k.Allows(ScopeAgent))
			require.Equal(t, tt.admin, k.Allows(ScopeAdmin))
			require.Equal(t, tt.ops, k.Allows(ScopeOps))
			require.False(t, k.Allows("root"))
			require.False(t, k.Allows(""))
		})
	}
}

func TestNewKeyRefusesUnknownOrMissingScopesAndBadNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, key string
		scopes    []Scope
		want      string
	}{
		{"unknown scope", "k", []Scope{"root"}, `unknown scope "root" (agent, admin, ops, platform)`},
		{"unknown beside known", "k", []Scope{ScopeAgent, "Admin"}, `unknown scope "Admin"`},
		{"no scope", "k", nil, "at least one scope (agent, admin, ops, platform) is required"},
		{"platform beside another", "k", []Scope{ScopePlatform, ScopeAdmin}, "the platform scope alone"},
		{"empty name", "", []Scope{ScopeAgent}, "1 to 64 characters without spaces"},
		{"space in name", "my key", []Scope{ScopeAgent}, "1 to 64 characters without spaces"},
		{"tab in name", "my\tkey", []Scope{ScopeAgent}, "1 to 64 characters without spaces"},
		{"a platform's name at an agency", "retell@lyon", []Scope{ScopeAgent}, "without spaces, @ or /"},
		{"a conversation's separator", "agent/1", []Scope{ScopeAgent}, "without spaces, @ or /"},
		{"name too long", strings.Repeat("k", 65), []Scope{ScopeAgent}, "1 to 64 characters without spaces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			secret, k, err := NewKey(tt.key, tt.scopes...)
			require.ErrorContains(t, err, tt.want)
			require.Empty(t, secret)
			require.Equal(t, Key{}, k)
		})
	}
	_, _, err := NewKey(strings.Repeat("k", 64), ScopeAgent)
	require.NoError(t, err, "64 characters is the longest name")
}

func TestTheStoredFormIsTheSHA256NotTheSecret(t *testing.T) {
	t.Parallel()
	secret, k := newKey(t, "agent", ScopeAgent)
	other, k2 := newKey(t, "agent", ScopeAgent)
	require.Regexp(t, `^bsk_[a-z2-7]{32}$`, secret, "160 random bits, base32")
	require.NotEqual(t, secret, other)
	require.NotEqual(t, k.Hash, k2.Hash)

	sum := sha256.Sum256([]byte(secret))
	require.Equal(t, hex.EncodeToString(sum[:]), k.Hash)
	require.NotContains(t, k.Hash, strings.TrimPrefix(secret, "bsk_"))

	stored, err := json.Marshal(k)
	require.NoError(t, err)
	require.NotContains(t, string(stored), strings.TrimPrefix(secret, "bsk_"))
	var fields map[string]any
	require.NoError(t, json.Unmarshal(stored, &fields))
	require.Equal(t, map[string]any{"name": "agent", "scopes": []any{"agent"}, "sha256": k.Hash}, fields)
}

func TestAKeyringFindsAKeyByItsSecretAlone(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keys.json")
	agentSecret, agent := newKey(t, "agent", ScopeAgent)
	opsSecret, ops := newKey(t, "ops", ScopeOps, ScopeAdmin)
	require.NoError(t, SaveKey(path, agent, false))
	require.NoError(t, SaveKey(path, ops, false))
	kr, err := LoadKeyring(path)
	require.NoError(t, err)

	got, err := kr.Find(agentSecret)
	require.NoError(t, err)
	require.Equal(t, agent, got)
	got, err = kr.Find(opsSecret)
	require.NoError(t, err)
	require.Equal(t, ops, got)

	require.True(t, kr.Allows(agentSecret, ScopeAgent))
	require.False(t, kr.Allows(agentSecret, ScopeAdmin))
	require.True(t, kr.Allows(opsSecret, ScopeAdmin))
	require.False(t, kr.Allows(opsSecret, ScopeAgent))

	flipped := agentSecret[:len(agentSecret)-1] + "a"
	if strings.HasSuffix(agentSecret, "a") {
		flipped = agentSecret[:len(agentSecret)-1] + "b"
	}
	for name, wrong := range map[string]string{"empty": "", "one character off": flipped, "upper case": strings.ToUpper(agentSecret),
		"the stored hash": agent.Hash, "without prefix": strings.TrimPrefix(agentSecret, "bsk_")} {
		_, err := kr.Find(wrong)
		require.ErrorIs(t, err, errNoKey, name)
		require.False(t, kr.Allows(wrong, ScopeAgent), name)
	}
}

func TestLoadKeyringRefusesAFileThatCouldLeaveTheAPIOpen(t *testing.T) {
	t.Parallel()
	_, good := newKey(t, "agent", ScopeAgent)
	for name, content := range map[string]string{
		"malformed":      `[{"name": "agent"`,
		"unknown scope":  `[{"name": "agent", "scopes": ["root"], "sha256": "` + good.Hash + `"}]`,
		"no scope":       `[{"name": "agent", "scopes": [], "sha256": "` + good.Hash + `"}]`,
		"short hash":     `[{"name": "agent", "scopes": ["agent"], "sha256": "abc"}]`,
		"duplicate name": `[{"name": "agent", "scopes": ["agent"], "sha256": "` + good.Hash + `"}, {"name": "agent", "scopes": ["ops"], "sha256": "` + strings.Repeat("0", 64) + `"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "keys.json")
			require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
			_, err := LoadKeyring(path)
			require.Error(t, err)
		})
	}
	_, err := LoadKeyring(filepath.Join(t.TempDir(), "missing.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestSaveKeyReplacesASameNamedKeyOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keys.json")
	oldSecret, old := newKey(t, "agent", ScopeAgent)
	newSecret, next := newKey(t, "agent", ScopeAgent)
	require.NoError(t, SaveKey(path, old, false))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	require.ErrorContains(t, SaveKey(path, next, false), "a key named agent exists")
	kr, err := LoadKeyring(path)
	require.NoError(t, err)
	require.True(t, kr.Allows(oldSecret, ScopeAgent), "a refused save changes nothing")
	require.False(t, kr.Allows(newSecret, ScopeAgent))

	require.NoError(t, SaveKey(path, next, true))
	kr, err = LoadKeyring(path)
	require.NoError(t, err)
	require.False(t, kr.Allows(oldSecret, ScopeAgent), "the replaced key is gone")
	require.True(t, kr.Allows(newSecret, ScopeAgent))

	require.ErrorContains(t, SaveKey(path, Key{Name: "x", Scopes: []Scope{"root"}}, false), `unknown scope "root"`)
}

// A rotation without a restart: add the new key, move the clients, remove
// the old; a running keyring follows the file.
func TestARotationTakesEffectInARunningKeyring(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keys.json")
	oldSecret, old := newKey(t, "agent-2027-01", ScopeAgent)
	newSecret, next := newKey(t, "agent-2027-06", ScopeAgent)
	require.NoError(t, SaveKey(path, old, false))
	kr, err := LoadKeyring(path)
	require.NoError(t, err)
	_, err = kr.Find(oldSecret)
	require.NoError(t, err)

	require.NoError(t, SaveKey(path, next, false))
	recheck(kr)
	for _, s := range []string{oldSecret, newSecret} {
		require.True(t, kr.Allows(s, ScopeAgent), "old and new work side by side")
	}

	writeKeys(t, path, next)
	kr.mu.Lock()
	kr.checked = time.Now().Add(time.Hour)
	kr.mu.Unlock()
	require.True(t, kr.Allows(oldSecret, ScopeAgent), "the file is looked at again at most once a second")
	recheck(kr)
	_, err = kr.Find(oldSecret)
	require.ErrorIs(t, err, errNoKey, "the removed key stops working once the file is read again")
	require.True(t, kr.Allows(newSecret, ScopeAgent))
}

func TestTheLastKeysStayInForceWhenTheFileBecomesUnreadable(t *testing.T) {
	t.Parallel()
	for name, spoil := range map[string]func(path string) error{
		"removed":   os.Remove,
		"malformed": func(path string) error { return os.WriteFile(path, []byte("[{"), 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "keys.json")
			secret, k := newKey(t, "agent", ScopeAgent)
			require.NoError(t, SaveKey(path, k, false))
			kr, err := LoadKeyring(path)
			require.NoError(t, err)

			require.NoError(t, spoil(path))
			recheck(kr)
			require.True(t, kr.Allows(secret, ScopeAgent))
			recheck(kr)
			_, err = kr.Find("bsk_wrong")
			require.ErrorIs(t, err, errNoKey)
			require.NotEqual(t, errNoKey.Error(), err.Error(), "the reload error comes with it, for the log")
			require.True(t, errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), path))
		})
	}
}

// A key replaced under the same name (keys new ... replacing it) makes a
// file of exactly the same size, and a coarse clock may give it the same
// modification time: a running keyring still stops taking the old key.
func TestAReplacedKeyStopsWorkingInARunningKeyring(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keys.json")
	oldSecret, old := newKey(t, "agent", ScopeAgent)
	newSecret, next := newKey(t, "agent", ScopeAgent)
	require.NoError(t, SaveKey(path, old, false))
	kr, err := LoadKeyring(path)
	require.NoError(t, err)
	require.True(t, kr.Allows(oldSecret, ScopeAgent))
	before, err := os.Stat(path)
	require.NoError(t, err)

	require.NoError(t, SaveKey(path, next, true))
	require.NoError(t, os.Chtimes(path, before.ModTime(), before.ModTime()))
	after, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, before.Size(), after.Size(), "the same size: only the hash changed")
	recheck(kr)
	require.False(t, kr.Allows(oldSecret, ScopeAgent), "the replaced key is refused")
	require.True(t, kr.Allows(newSecret, ScopeAgent))
}
