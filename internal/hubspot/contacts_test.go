package hubspot

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
)

// meeting writes the viewing and returns its meeting's id.
func (f *fixture) meeting(t *testing.T, c *Client) string {
	t.Helper()
	rec, err := c.Upsert(context.Background(), viewing(), 0)
	require.NoError(t, err)
	return rec.ID
}

// A caller on file by email is one contact, however often the link is
// sent, a reply lost after the save included; the meeting reads back
// associated with it.
func TestACallerIsOneContactHoweverOftenLinked(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.client(t, "pat-na1-test")
	ctx := context.Background()
	id := f.meeting(t, c)
	caller := crm.Caller{Name: "Jeanne Marie Dupont", Email: "jeanne@example.com", Phone: "+33612345678"}
	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "contacts.upsert", DropAfterSave: true, Times: 1}))
	first, err := c.Link(ctx, id, caller)
	require.NoError(t, err)
	again, err := c.Link(ctx, id, caller)
	require.NoError(t, err)
	require.Equal(t, first, again)
	people := f.fake.Contacts()
	require.Len(t, people, 1)
	require.Equal(t, "Jeanne Marie", people[0].Properties["firstname"])
	require.Equal(t, "Dupont", people[0].Properties["lastname"])
	got, err := c.Get(ctx, "b-1")
	require.NoError(t, err)
	require.Equal(t, []string{first}, got.Contacts)
}

// A contact staff made already, with the caller's phone, is the one
// linked: none is created.
func TestACallerStaffKnowIsFoundByPhone(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.client(t, "pat-na1-test")
	known := f.fake.AddContact(map[string]string{"firstname": "Li", "mobilephone": "+33698765432"})
	got, err := c.Link(context.Background(), f.meeting(t, c), crm.Caller{Name: "Li Wei", Phone: "+33698765432"})
	require.NoError(t, err)
	require.Equal(t, known, got)
	require.Len(t, f.fake.Contacts(), 1)
	require.Equal(t, "Li", f.fake.Contacts()[0].Properties["firstname"], "a contact found is not rewritten")
}

// A phone-only caller created by the adapter is found again after a lost
// reply by the unique property it was created under, even when the search
// would not see it.
func TestAPhoneOnlyCallerIsCreatedOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.client(t, "pat-na1-test")
	id := f.meeting(t, c)
	caller := crm.Caller{Name: "Sam", Phone: "+447700900123"}
	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "contacts.upsert", DropAfterSave: true, Times: 1}))
	_, err := c.Link(context.Background(), id, caller)
	require.NoError(t, err)
	require.Len(t, f.fake.Contacts(), 1)
	require.Equal(t, "+447700900123", f.fake.Contacts()[0].Properties[propCallerPhone])
}

// A contact staff merged into another is followed: the link goes to the
// contact it became, and none is created.
func TestAMergedContactIsFollowed(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.client(t, "pat-na1-test")
	ctx := context.Background()
	id := f.meeting(t, c)
	old, err := c.Link(ctx, id, crm.Caller{Name: "Ana Lopez", Email: "ana@example.com"})
	require.NoError(t, err)
	winner := f.fake.AddContact(map[string]string{"email": "ana.lopez@example.org"})
	f.fake.Merge(winner, old)
	got, err := c.Link(ctx, id, crm.Caller{Name: "Ana Lopez", Email: "ana@example.com", ContactID: old})
	require.NoError(t, err)
	require.Equal(t, winner, got)
	require.Len(t, f.fake.Contacts(), 1)
	require.Equal(t, []string{winner}, f.fake.Meetings()[0].Contacts)
}

// Forgetting a caller deletes their contact; the meeting stays, with
// references only, and forgetting again is done.
func TestAForgottenCallerLeavesTheMeetingWithReferencesOnly(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.client(t, "pat-na1-test")
	ctx := context.Background()
	id := f.meeting(t, c)
	contact, err := c.Link(ctx, id, crm.Caller{Name: "Jeanne Dupont", Email: "jeanne@example.com", Phone: "+33612345678"})
	require.NoError(t, err)
	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "contacts.gdpr-delete", DropAfterSave: true, Times: 1}))
	require.NoError(t, c.Forget(ctx, contact))
	require.NoError(t, c.Forget(ctx, contact))
	require.Empty(t, f.fake.Contacts())
	m := f.fake.Meetings()
	require.Len(t, m, 1)
	require.Empty(t, m[0].Contacts)
	for k, v := range m[0].Properties {
		require.NotContains(t, v, "jeanne", k)
		require.NotContains(t, v, "612345678", k)
		require.NotContains(t, v, "Dupont", k)
	}
}

func TestALinkWithoutAnEmailOrPhoneIsRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.client(t, "pat-na1-test")
	_, err := c.Link(context.Background(), f.meeting(t, c), crm.Caller{Name: "Nobody"})
	require.ErrorContains(t, err, "needs an email or a phone")
	require.Zero(t, f.fake.Calls("contacts.search"))
}
