package ratelimit

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

func TestABookingCallRepeatedIsFreeAndAReadIsNot(t *testing.T) {
	t.Parallel()
	b := New(Limits{PerSecond: 1, Burst: 3, RepeatWindow: time.Minute})
	for range 10 {
		ok := b.Charge("voice", "default", []byte("book k-1"), true, now).OK
		require.True(t, ok, "one token, then free")
	}
	ok := b.Charge("voice", "default", []byte("status k-1"), false, now).OK
	require.True(t, ok)
	ok = b.Charge("voice", "default", []byte("status k-1"), false, now).OK
	require.True(t, ok, "the third token")
	v := b.Charge("voice", "default", []byte("status k-1"), false, now)
	require.False(t, v.OK, "a read repeated costs again")
	require.Equal(t, Verdict{Wait: time.Second}, v, "the key's bucket refused")
	ok = b.Charge("other", "default", []byte("status k-1"), false, now).OK
	require.True(t, ok, "each caller its own bucket")
	ok = b.Charge("voice", "default", []byte("book k-1"), true, now.Add(2*time.Minute)).OK
	require.True(t, ok, "tokens come back with time")
}

func TestABucketRemembersABoundedNumberOfCalls(t *testing.T) {
	t.Parallel()
	b := New(Limits{PerSecond: 1e9, Burst: 1 << 30, RepeatWindow: time.Second})
	for i := range 3 * maxSeen {
		ok := b.Charge("voice", "default", fmt.Appendf(nil, "book k-%d", i), true, now.Add(time.Duration(i)*time.Millisecond)).OK
		require.True(t, ok)
	}
	require.LessOrEqual(t, len(b.of("voice").seen), maxSeen+1)
}

func TestNoLimitAdmitsEverything(t *testing.T) {
	t.Parallel()
	b := New(Limits{})
	for range 100 {
		ok := b.Charge("voice", "default", []byte("x"), false, now).OK
		require.True(t, ok)
	}
}

// An agency's keys draw on its bucket too: each key under its own limit,
// the agency over its, is refused as the agency's, and the key's token
// goes back; another agency's keys are untouched.
func TestAnAgencysKeysShareItsBucket(t *testing.T) {
	t.Parallel()
	// A key's token comes back in ten seconds, the agency's in one.
	b := New(Limits{PerSecond: 0.1, Burst: 1, AgencyPerSecond: 1, AgencyBurst: 2, RepeatWindow: time.Minute})
	for _, key := range []string{"lyon-a", "lyon-c"} {
		require.True(t, b.Charge(key, "lyon", []byte("status k-1"), false, now).OK, key)
	}
	v := b.Charge("lyon-b", "lyon", []byte("status k-1"), false, now)
	require.Equal(t, Verdict{Wait: time.Second, Agency: true}, v, "lyon-b has its token, lyon none")
	require.True(t, b.Charge("paris-a", "paris", []byte("status k-1"), false, now).OK, "paris has a bucket of its own")
	require.True(t, b.Charge("lyon-b", "lyon", []byte("status k-1"), false, now.Add(time.Second)).OK,
		"a second later lyon has a token again, and lyon-b still its own: the refused call gave it back")
	require.False(t, b.Charge("lyon-a", "lyon", []byte("status k-1"), false, now.Add(2*time.Second)).OK,
		"lyon-a spent its token and waits ten seconds")
}
