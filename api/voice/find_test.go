package voice

import (
	"context"
	"fmt"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/receipt"
)

func TestFindAttemptsAreLimitedPerCallAndPerReference(t *testing.T) {
	t.Parallel()
	var f finds
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for range findBurst {
		require.True(t, f.allow("default", "call-1", "BS-AAAA-AAAA", now))
	}
	require.False(t, f.allow("default", "call-1", "BS-BBBB-BBBB", now), "the call has spent its attempts")
	require.False(t, f.allow("default", "call-2", "BS-AAAA-AAAA", now), "so has the reference, from any call")
	require.True(t, f.allow("default", "call-2", "BS-BBBB-BBBB", now))
	require.True(t, f.allow("default", "call-1", "BS-CCCC-CCCC", now.Add(findPerCall)), "one more, in time")
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// The limiter's memory is bounded whatever the callers send: 20,000
// conversations whose ids are 64 KiB each (headers up to a megabyte pass
// the edge) leave a bounded number of fixed-size entries, not 1.25 GiB of
// ids.
func TestTheFindLimiterHoldsBoundedMemory(t *testing.T) {
	var f finds
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	before := heapInUse()
	id := make([]byte, 64<<10)
	for i := range 20000 {
		copy(id, fmt.Sprintf("call-%08d", i))
		f.allow("default", string(id), "BS-AAAA-AAAA", now)
	}
	held := int64(heapInUse()) - int64(before)
	require.LessOrEqual(t, len(f.by), maxFindEntries, "entries")
	require.Less(t, held, int64(16<<20), "bytes held by the limiter")
}

// A reference is counted as the booking it names, however it is written:
// the store reads "BS-AAAA-AAAA", "bsaaaa-aaaa" and "BS-A-A-A-A-A-A-A-A" alike.
func TestFindAttemptsCountTheReferenceNotItsSpelling(t *testing.T) {
	t.Parallel()
	var f finds
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	spellings := []string{"BS-AAAA-AAAA", "BSAAAA-AAAA", "bs-aaaa-aaaa", "BS-A-A-A-A-A-A-A-A", "BS-AAAAAAAA"}
	for i, ref := range spellings {
		canonical, err := receipt.CanonicalReference(ref)
		require.NoError(t, err, ref)
		require.True(t, f.allow("default", fmt.Sprint("call-", i), canonical, now), ref)
	}
	canonical, err := receipt.CanonicalReference("BS-AAAA-AAAA")
	require.NoError(t, err)
	require.False(t, f.allow("default", "call-new", canonical, now), "five spellings spent the booking's five attempts")
	_, err = receipt.CanonicalReference("BS-AAAA")
	require.Error(t, err, "not a reference")
}

// A conversation id is bounded at the edge: one of a kilobyte is refused
// before anything keys on it.
func TestALongConversationIDIsRefused(t *testing.T) {
	t.Parallel()
	tools := New(nil, edge.Settings{}, Config{})
	ans := tools.call(context.Background(), callOf(strings.Repeat("x", 1024), ""), "find_booking", []byte(`{"reference":"BS-AAAA-AAAA","phone":"0612345678"}`))
	require.True(t, ans.Failed(), ans.Text())
	require.Equal(t, "invalid_conversation_id", ans.Code)
	require.Empty(t, tools.finds.by, "nothing counted")
}

// An API key has a budget of its own: new conversations (fresh call ids,
// minted ones) don't give one key endless attempts, and another key's
// callers are not held back by it.
func TestFindAttemptsAreLimitedPerKey(t *testing.T) {
	t.Parallel()
	var f finds
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range findPerKeyBurst {
		require.True(t, f.allow("default", fmt.Sprintf("agent-a/call-%d", i), fmt.Sprintf("BS-AAAA-%04d", i), now), i)
	}
	require.False(t, f.allow("default", "agent-a/call-new", "BS-BBBB-BBBB", now), "the key has spent its budget")
	require.True(t, f.allow("default", "agent-b/call-1", "BS-BBBB-BBBB", now), "another key's")
}

// An agency's keys share a budget of four keys': a fifth key of the
// agency finds it spent, another agency's keys do not; and a reference
// is counted in its agency's space, so one agency's tries at a reference
// never spend another's caller's.
func TestFindAttemptsAreLimitedPerAgency(t *testing.T) {
	t.Parallel()
	f := finds{perKeyHour: 50} // a burst of five a key, twenty an agency
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for k := range findsAgencyKeys {
		for i := range 5 {
			require.True(t, f.allow("lyon", fmt.Sprintf("lyon-%d/call-%d", k, i), fmt.Sprintf("BS-%04d-%04d", k, i), now), "key %d, try %d", k, i)
		}
	}
	require.False(t, f.allow("lyon", "lyon-new/call-1", "BS-BBBB-BBBB", now), "lyon has spent its budget, whichever key asks")
	for i := range 5 {
		require.True(t, f.allow("paris", fmt.Sprintf("paris-0/call-%d", i), "BS-0000-0000", now), "paris's own budget, and its own count of a reference lyon tried")
	}
}

// One key flooding find_booking with new calls and references neither
// fills the limiter so that every other caller is refused (it failed
// closed) nor spends another key's budget: a returning caller on another
// platform's key still gets their attempt (DLM3).
func TestAFloodingKeyLocksNobodyElseOut(t *testing.T) {
	t.Parallel()
	var f finds
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range 3 * maxFindEntries {
		f.allow("default", fmt.Sprintf("flood/call-%d", i), fmt.Sprintf("BS-%04d-AAAA", i%10000), now)
	}
	require.LessOrEqual(t, len(f.by), maxFindEntries)
	require.True(t, f.allow("default", "vapi/call-returning", "BS-ZZZZ-ZZZZ", now), "another key's caller is not locked out")
	require.False(t, f.allow("default", "flood/call-new", "BS-YYYY-YYYY", now), "the flooding key has spent its own budget")
}

// A platform's key is sized for its volume: its burst is a tenth of the
// hour's attempts, each call and reference still held to its own.
func TestAKeysFindBudgetIsSizedForItsPlatform(t *testing.T) {
	t.Parallel()
	f := finds{perKeyHour: 3000}
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range 300 {
		require.True(t, f.allow("default", fmt.Sprintf("vapi/call-%d", i), fmt.Sprintf("caller:+3361234%04d", i), now), "attempt %d", i)
	}
	require.False(t, f.allow("default", "vapi/call-next", "caller:+33699999999", now), "the burst spent")
}
