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
		ok, _ := b.Charge("voice", []byte("book k-1"), true, now)
		require.True(t, ok, "one token, then free")
	}
	ok, _ := b.Charge("voice", []byte("status k-1"), false, now)
	require.True(t, ok)
	ok, _ = b.Charge("voice", []byte("status k-1"), false, now)
	require.True(t, ok, "the third token")
	ok, wait := b.Charge("voice", []byte("status k-1"), false, now)
	require.False(t, ok, "a read repeated costs again")
	require.Equal(t, time.Second, wait)
	ok, _ = b.Charge("other", []byte("status k-1"), false, now)
	require.True(t, ok, "each caller its own bucket")
	ok, _ = b.Charge("voice", []byte("book k-1"), true, now.Add(2*time.Minute))
	require.True(t, ok, "tokens come back with time")
}

func TestABucketRemembersABoundedNumberOfCalls(t *testing.T) {
	t.Parallel()
	b := New(Limits{PerSecond: 1e9, Burst: 1 << 30, RepeatWindow: time.Second})
	for i := range 3 * maxSeen {
		ok, _ := b.Charge("voice", fmt.Appendf(nil, "book k-%d", i), true, now.Add(time.Duration(i)*time.Millisecond))
		require.True(t, ok)
	}
	require.LessOrEqual(t, len(b.of("voice").seen), maxSeen+1)
}

func TestNoLimitAdmitsEverything(t *testing.T) {
	t.Parallel()
	b := New(Limits{})
	for range 100 {
		ok, _ := b.Charge("voice", []byte("x"), false, now)
		require.True(t, ok)
	}
}
