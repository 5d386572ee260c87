package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// concurrently runs fn n times at once and returns each call's results.
func concurrently[T any](n int, fn func(i int) (T, error)) ([]T, []error) {
	outs, errs := make([]T, n), make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			outs[i], errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return outs, errs
}

func TestCommitDuplicatesCollapseToOneBooking(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := commitReq("req_dup", intent("paris", agent(0), "10:30", "11:00"))
	outs, errs := concurrently(5, func(int) (Outcome, error) { return f.store.Commit(f.ctx, req) })
	fresh := 0
	for i := range outs {
		require.NoError(t, errs[i])
		require.Nil(t, outs[i].Conflict)
		require.Equal(t, booking.StatusConfirmed, outs[i].Booking.Status)
		if !outs[i].Replayed {
			fresh++
		}
		b := outs[i].Booking
		b0 := outs[0].Booking
		require.Equal(t, b0, b, "outcome %d differs", i)
	}
	require.Equal(t, 1, fresh, "exactly one call writes")
	n := f.count(t)
	require.Equal(t, 1, n["booking"])
	require.Equal(t, 2, n["booking_resource"])
	require.Equal(t, 1, n["booking_event"])
}

func TestCommitRaceHasOneWinner(t *testing.T) {
	t.Parallel()
	f := setup(t)
	outs, errs := concurrently(20, func(i int) (Outcome, error) {
		return f.store.Commit(f.ctx, commitReq(fmt.Sprintf("req_race_%d", i), intent("paris", agent(i), "14:00", "14:30")))
	})
	confirmed, conflicts := 0, 0
	for i, out := range outs {
		require.NoError(t, errs[i], "no SQL error may surface")
		if out.Conflict == nil {
			confirmed++
			continue
		}
		conflicts++
		require.Equal(t, []booking.Busy{{ResourceID: "paris", Capacity: 1, From: paris("14:00").UTC(), To: paris("14:30").UTC()}}, out.Conflict.Busy)
	}
	require.Equal(t, 1, confirmed)
	require.Equal(t, 19, conflicts)
	require.Equal(t, 1, f.count(t)["booking"])
}

func TestCapacityCountsPeakOverlapNotOverlappingRows(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for i, slot := range [][2]string{{"09:00", "10:00"}, {"10:00", "11:00"}, {"09:30", "10:30"}} {
		out, err := f.store.Commit(f.ctx, commitReq(fmt.Sprintf("req_cap_%d", i), intent("duo", agent(i), slot[0], slot[1])))
		require.NoError(t, err)
		require.Nil(t, out.Conflict, "booking %s–%s fits capacity 2", slot[0], slot[1])
	}
	out, err := f.store.Commit(f.ctx, commitReq("req_cap_3", intent("duo", agent(3), "09:45", "10:15")))
	require.NoError(t, err)
	require.NotNil(t, out.Conflict)
	require.Equal(t, []booking.Busy{{ResourceID: "duo", Capacity: 2, From: paris("09:45").UTC(), To: paris("10:00").UTC()}}, out.Conflict.Busy)
}

func TestBuffersBlockTouchingSlots(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "loft", Kind: "property", Capacity: 1,
		TimeZone: "Europe/Paris", BufferBeforeMinutes: 10, BufferAfterMinutes: 15}))
	commit := func(key, from, to string, agentIdx int) *Conflict {
		out, err := f.store.Commit(f.ctx, commitReq(key, intent("loft", agent(agentIdx), from, to)))
		require.NoError(t, err)
		return out.Conflict
	}
	require.Nil(t, commit("req_buf_0", "10:00", "10:30", 0))
	// loft is occupied 09:50–10:45. A slot touching the viewing, or whose own
	// before-buffer reaches into the after-buffer, is refused.
	c := commit("req_buf_1", "10:30", "11:00", 1)
	require.NotNil(t, c)
	require.Equal(t, "loft", c.Busy[0].ResourceID)
	require.NotNil(t, commit("req_buf_2", "10:50", "11:20", 2), "10:40 (with its 10 min before-buffer) overlaps 10:45")
	require.NotNil(t, commit("req_buf_3", "09:20", "09:45", 3), "after-buffer to 10:00 overlaps 09:50")
	require.Nil(t, commit("req_buf_4", "10:55", "11:25", 4), "occupies 10:45–11:40: touches, does not overlap")
	require.Nil(t, commit("req_buf_5", "09:05", "09:35", 5), "occupies 08:55–09:50: touches, does not overlap")
}

func TestPolicyBuffersAreAFloor(t *testing.T) {
	t.Parallel()
	f := setup(t)
	p := testPolicy
	p.Version, p.DefaultBufferAfterMinutes = "showing-policy-2", 30
	require.NoError(t, f.store.SetPolicy(f.ctx, p))
	req := func(key, from, to string, a int) CommitRequest {
		r := commitReq(key, intent("paris", agent(a), from, to))
		r.ExpectedPolicyVersion = p.Version
		return r
	}
	out, err := f.store.Commit(f.ctx, req("req_pb_0", "10:00", "10:30", 0))
	require.NoError(t, err)
	require.Nil(t, out.Conflict)
	out, err = f.store.Commit(f.ctx, req("req_pb_1", "10:45", "11:15", 1))
	require.NoError(t, err)
	require.NotNil(t, out.Conflict)
}

func TestMultiResourceConflictHoldsNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "req_keys", intent("duo", agent(0), "15:00", "15:30", "keys"))
	before := f.count(t)
	out, err := f.store.Commit(f.ctx, commitReq("req_three", intent("paris", agent(1), "15:15", "15:45", "keys")))
	require.NoError(t, err)
	require.NotNil(t, out.Conflict)
	require.Len(t, out.Conflict.Busy, 1)
	require.Equal(t, "keys", out.Conflict.Busy[0].ResourceID)
	after := f.count(t)
	require.Equal(t, before["booking"], after["booking"])
	require.Equal(t, before["booking_resource"], after["booking_resource"], "nothing partly held")
	_, err = f.store.Lookup(f.ctx, "req_three")
	require.ErrorIs(t, err, booking.ErrNotFound)
	// paris and agent-01 were not taken by the refused request.
	out, err = f.store.Commit(f.ctx, commitReq("req_free", intent("paris", agent(1), "15:15", "15:45")))
	require.NoError(t, err)
	require.Nil(t, out.Conflict)
}

func TestRandomResourceOrdersNeverDeadlock(t *testing.T) {
	t.Parallel()
	f := setup(t)
	pool := []string{"keys", agent(30), agent(31), agent(32), agent(33)}
	outs, errs := concurrently(40, func(i int) (Outcome, error) {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		extras := append([]string(nil), pool...)
		r.Shuffle(len(extras), func(a, b int) { extras[a], extras[b] = extras[b], extras[a] })
		extras = extras[:1+r.IntN(3)]
		slot := []string{"16:00", "16:30", "17:00"}[r.IntN(3)]
		in := intent([]string{"paris", "duo"}[r.IntN(2)], agent(i%10), slot, paris(slot).Add(45*time.Minute).Format("15:04"), extras...)
		return f.store.Commit(f.ctx, commitReq(fmt.Sprintf("req_rnd_%d", i), in))
	})
	booked := 0
	for i := range outs {
		require.NoError(t, errs[i])
		if outs[i].Conflict == nil {
			booked++
		}
	}
	require.Positive(t, booked)
	// Whatever won, no capacity-1 resource is double-booked.
	var overlaps int
	require.NoError(t, f.pool.QueryRow(f.ctx, `
SELECT count(*) FROM booking_resource a JOIN booking_resource b
  ON a.resource_id = b.resource_id AND a.booking_id < b.booking_id AND a.occupied && b.occupied
JOIN resource r ON r.resource_id = a.resource_id
WHERE a.live AND b.live AND r.capacity = 1`).Scan(&overlaps))
	require.Zero(t, overlaps)
}

func TestRequestKeyReusedForAnotherIntent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "req_reuse", intent("paris", agent(0), "10:00", "10:30"))
	before := f.count(t)
	_, err := f.store.Commit(f.ctx, commitReq("req_reuse", intent("paris", agent(0), "11:00", "11:30")))
	requireCode(t, err, booking.CodeRequestKeyReused)
	require.Contains(t, err.Error(), "req_reuse")
	require.Equal(t, before, f.count(t))
	// The same instant written with another offset is the same intent.
	same := intent("paris", agent(0), "10:00", "10:30")
	same.StartsAt, same.EndsAt = same.StartsAt.UTC(), same.EndsAt.In(time.FixedZone("x", 5*3600))
	out, err := f.store.Commit(f.ctx, commitReq("req_reuse", same))
	require.NoError(t, err)
	require.True(t, out.Replayed)
}

func TestBadInputIsRejectedAndWritesNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ok := func() CommitRequest { return commitReq("req_bad", intent("paris", agent(0), "10:00", "10:30")) }
	// Malformed requests are refused before anything is read, and write
	// nothing at all; refusals that depend on the store's state (the
	// policy, the resources, the clock) are decisions, recorded under
	// their key, and still book nothing.
	tests := []struct {
		name    string
		edit    func(*CommitRequest)
		code    booking.Code
		decided bool
	}{
		{"end before start", func(r *CommitRequest) { r.Intent.EndsAt = r.Intent.StartsAt.Add(-time.Minute) }, booking.CodeInvalidTimeRange, false},
		{"end equals start", func(r *CommitRequest) { r.Intent.EndsAt = r.Intent.StartsAt }, booking.CodeInvalidTimeRange, false},
		{"unknown zone", func(r *CommitRequest) { r.Intent.TimeZone = "Mars/Olympus" }, booking.CodeUnknownTimeZone, false},
		{"zone mismatch", func(r *CommitRequest) { r.Intent.TimeZone = "Europe/London" }, booking.CodeTimeZoneMismatch, true},
		{"unknown resource", func(r *CommitRequest) { r.Intent.ExtraResources = []string{"nobody"} }, booking.CodeUnknownResource, true},
		{"agent as property", func(r *CommitRequest) { r.Intent.PropertyID = agent(5) }, booking.CodeWrongResourceKind, true},
		{"duplicate resource", func(r *CommitRequest) { r.Intent.ExtraResources = []string{agent(0)} }, booking.CodeDuplicateResource, false},
		{"empty key", func(r *CommitRequest) { r.RequestKey = "" }, booking.CodeInvalidRequestKey, false},
		{"oversized key", func(r *CommitRequest) { r.RequestKey = strings.Repeat("k", 256) }, booking.CodeInvalidRequestKey, false},
		{"policy changed", func(r *CommitRequest) { r.ExpectedPolicyVersion = "showing-policy-0" }, booking.CodePolicyVersionChanged, true},
		{"no policy version", func(r *CommitRequest) { r.ExpectedPolicyVersion = "" }, booking.CodeMissingField, false},
		{"in the past", func(r *CommitRequest) {
			r.Intent.StartsAt, r.Intent.EndsAt = testNow.Add(-time.Hour), testNow.Add(-30*time.Minute)
		}, booking.CodeStartsInPast, true},
		{"short notice", func(r *CommitRequest) {
			r.Intent.StartsAt, r.Intent.EndsAt = testNow.Add(30*time.Minute), testNow.Add(time.Hour)
		}, booking.CodeTooShortNotice, true},
		{"before opening", func(r *CommitRequest) { r.Intent.StartsAt = paris("07:30") }, booking.CodeOutsideBookableHours, true},
		{"past closing", func(r *CommitRequest) { r.Intent.EndsAt = paris("20:30") }, booking.CodeOutsideBookableHours, true},
	}
	before := f.count(t)
	for i, tc := range tests {
		req := ok()
		req.RequestKey = fmt.Sprintf("req_bad_%d", i)
		tc.edit(&req)
		_, err := f.store.Commit(f.ctx, req)
		requireCode(t, err, tc.code)
		after := f.count(t)
		for _, table := range []string{"booking", "booking_resource", "booking_contact"} {
			require.Equal(t, before[table], after[table], "%s: %s", tc.name, table)
		}
		d, err := f.store.Decision(f.ctx, req.RequestKey)
		if !tc.decided {
			require.Equal(t, before, after, tc.name)
			require.ErrorIs(t, err, booking.ErrNotFound, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.code, d.Refusal.Code, tc.name)
		before = after
	}
	requireCode(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "zero", Kind: "property", Capacity: 0, TimeZone: "Europe/Paris"}),
		booking.CodeInvalidResource)
	requireCode(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "zone", Kind: "property", Capacity: 1, TimeZone: "Nowhere/Else"}),
		booking.CodeUnknownTimeZone)
	requireCode(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "crm", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", CRM: "salesforce"}),
		booking.CodeInvalidResource)
	requireCode(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "crm", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", CRM: "hubspot"}),
		booking.CodeInvalidResource)
	require.Equal(t, before, f.count(t))
}

func TestExclusionConstraintStopsBypassingWriters(t *testing.T) {
	t.Parallel()
	f := setup(t)
	out, err := f.store.Commit(f.ctx, commitReq("req_ex", intent("paris", agent(0), "10:00", "10:30")))
	require.NoError(t, err)
	// A writer that skips the service and its locks still cannot overlap a
	// capacity-1 resource.
	_, err = f.pool.Exec(f.ctx, `
WITH b AS (
  INSERT INTO booking (booking_id, request_key, status, property_id, agent_id, starts_at, ends_at, time_zone,
                       policy_version, intent_fingerprint, committed_at)
  SELECT gen_random_uuid(), 'rogue', 'confirmed', property_id, 'agent-09', starts_at, ends_at, time_zone,
         policy_version, '\x00', now() FROM booking WHERE booking_id = $1
  RETURNING booking_id, starts_at, ends_at)
INSERT INTO booking_resource (booking_id, resource_id, resource_no, occupied, live, exclusive)
SELECT booking_id, 'paris', (SELECT resource_no FROM resource WHERE resource_id = 'paris'), tstzrange(starts_at, ends_at), true, true FROM b`, out.Booking.BookingID)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "23P01", pgErr.Code)
}

func TestContactIsKeptApartWithRetention(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := commitReq("req_contact", intent("paris", agent(0), "10:00", "10:30"))
	req.Contact = &booking.Contact{Name: "Test Caller", Phone: "+33 1 00 00 00 00"}
	out, err := f.store.Commit(f.ctx, req)
	require.NoError(t, err)
	var retain time.Time
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT retain_until FROM booking_contact WHERE booking_id = $1",
		out.Booking.BookingID).Scan(&retain))
	require.True(t, retain.Equal(paris("10:30").Add(30*24*time.Hour)))
	var detail string
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT detail::text FROM booking_event WHERE request_key = $1", "req_contact").Scan(&detail))
	require.NotContains(t, detail, "+33", "the audit log holds no personal data")
	_, err = f.pool.Exec(f.ctx, "UPDATE booking_event SET kind = 'x'")
	require.ErrorContains(t, err, "append-only")
}

// A caller that lost the response retries with the same key: it hears the
// original booking, and nothing new is written.
func TestRetryAfterLostResponseReplays(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := commitReq("req_lost", intent("paris", agent(0), "13:00", "13:30"))
	first, err := f.store.Commit(f.ctx, req)
	require.NoError(t, err)
	require.False(t, first.Replayed)
	before := f.count(t)
	again, err := f.store.Commit(f.ctx, req)
	require.NoError(t, err)
	require.True(t, again.Replayed)
	require.Equal(t, first.Booking, again.Booking)
	require.Equal(t, before, f.count(t))
}

// The same key sent at once with different intents (on different resources,
// so the resource locks do not order them) collides on the unique key; the
// store turns that into one booking and typed refusals, never a raw 23505.
func TestConcurrentKeyReuseIsRefusedNotRaw(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, errs := concurrently(6, func(i int) (Outcome, error) {
		return f.store.Commit(f.ctx, commitReq("req_same", intent("paris", agent(10+i), "17:00", "17:30")))
	})
	booked := 0
	for _, err := range errs {
		if err == nil {
			booked++
			continue
		}
		requireCode(t, err, booking.CodeRequestKeyReused)
		var pgErr *pgconn.PgError
		require.False(t, errors.As(err, &pgErr), "raw PostgreSQL error leaked: %v", err)
	}
	require.Equal(t, 1, booked)
	require.Equal(t, 1, f.count(t)["booking"])
}

// Capacity above one has no exclusion constraint behind it: only the
// resource locks keep concurrent commits from overbooking it.
func TestConcurrentCommitsRespectCapacityTwo(t *testing.T) {
	t.Parallel()
	f := setup(t)
	outs, errs := concurrently(12, func(i int) (Outcome, error) {
		return f.store.Commit(f.ctx, commitReq(fmt.Sprintf("req_duo_%d", i), intent("duo", agent(i), "18:00", "18:30")))
	})
	confirmed := 0
	for i := range outs {
		require.NoError(t, errs[i])
		if outs[i].Conflict == nil {
			confirmed++
		}
	}
	require.Equal(t, 2, confirmed)
}
