package store

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Two keys whose 40-bit references are the same, found by search (about a
// million keys in, as the birthday bound says).
const collideA, collideB = "collide-770699", "collide-2205839"

// TestTwoKeysWithOneReferenceNeverShareIt: the second key to commit is
// refused rather than booked under a reference that already names another
// booking, and a lookup by a reference that names more than one key
// answers no booking at all rather than another caller's.
func TestTwoKeysWithOneReferenceNeverShareIt(t *testing.T) {
	t.Parallel()
	require.Equal(t, receipt.Reference(collideA), receipt.Reference(collideB), "the keys collide")
	f := setup(t)
	ref := receipt.Reference(collideA)
	f.booked(t, collideA, intent("paris", agent(0), "10:00", "10:30"))
	key, err := f.store.KeyByReference(f.ctx, ref)
	require.NoError(t, err)
	require.Equal(t, collideA, key)

	// Another resource, another time: only the reference is shared.
	_, err = f.store.Commit(f.ctx, commitReq(collideB, intent("duo", agent(1), "11:00", "11:30")))
	requireCode(t, err, booking.CodeReferenceCollision)
	_, err = f.store.Commit(f.ctx, commitReq(collideB, intent("duo", agent(1), "11:00", "11:30")))
	requireCode(t, err, booking.CodeReferenceCollision)
	require.Equal(t, 1, f.count(t)["booking"], "no second booking under the reference")

	_, err = f.store.KeyByReference(f.ctx, ref)
	requireCode(t, err, booking.CodeReferenceCollision)
	d, err := f.store.Decision(f.ctx, collideA)
	require.NoError(t, err)
	require.Equal(t, booking.StatusConfirmed, d.Booking.Status, "the first booking stands, found by its key")
}

// TestTwoCollidingKeysRacingBookOne: committed at once, on different
// resources, the two keys end with one booking and one refusal.
func TestTwoCollidingKeysRacingBookOne(t *testing.T) {
	t.Parallel()
	f := setup(t)
	errs := make(chan error, 2)
	for i, key := range []string{collideA, collideB} {
		go func() {
			_, err := f.store.Commit(f.ctx, commitReq(key, intent("paris", agent(2+i), fmt.Sprintf("1%d:00", i), fmt.Sprintf("1%d:30", i))))
			errs <- err
		}()
	}
	refused := 0
	for range 2 {
		if err := <-errs; err != nil {
			requireCode(t, err, booking.CodeReferenceCollision)
			refused++
		}
	}
	require.Equal(t, 1, refused)
	require.Equal(t, 1, f.count(t)["booking"])
}
