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
	require.True(t, first.Created, "the service's own")
	people := f.fake.Contacts()
	require.Len(t, people, 1)
	require.Equal(t, "Jeanne Marie", people[0].Properties["firstname"])
	require.Equal(t, "Dupont", people[0].Properties["lastname"])
	got, err := c.Get(ctx, "b-1")
	require.NoError(t, err)
	require.Equal(t, []string{first.ContactID}, got.Contacts)
}

// A contact staff made already, with the caller's phone and name, is the
// one linked, as the agency's: none is created. A phone alone (a family's
// landline) is no match: the caller gets a contact of the service's own.
func TestACallerStaffKnowIsFoundByPhoneAndName(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.client(t, "pat-na1-test")
	known := f.fake.AddContact(map[string]string{"firstname": "Li", "lastname": "Wei", "mobilephone": "+33698765432"})
	got, err := c.Link(context.Background(), f.meeting(t, c), crm.Caller{Name: "Li Wei", Phone: "+33698765432"})
	require.NoError(t, err)
	require.Equal(t, crm.Linked{ContactID: known}, got, "found, not made")
	require.Len(t, f.fake.Contacts(), 1)
	require.Equal(t, "Li", f.fake.Contacts()[0].Properties["firstname"], "a contact found is not rewritten")

	other, err := c.Link(context.Background(), f.meeting(t, c), crm.Caller{Name: "Chen Wei", Phone: "+33698765432"})
	require.NoError(t, err)
	require.NotEqual(t, known, other.ContactID)
	require.True(t, other.Created)
	require.Len(t, f.fake.Contacts(), 2)
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
	require.Equal(t, callerKey(caller), f.fake.Contacts()[0].Properties[propCaller])
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
	f.fake.Merge(winner, old.ContactID)
	got, err := c.Link(ctx, id, crm.Caller{Name: "Ana Lopez", Email: "ana@example.com", ContactID: old.ContactID})
	require.NoError(t, err)
	require.Equal(t, crm.Linked{ContactID: winner}, got, "the one staff kept is the agency's")
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
	require.NoError(t, c.Forget(ctx, contact.ContactID))
	require.NoError(t, c.Forget(ctx, contact.ContactID))
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

// The agency's contact with the caller's exact e-mail is linked as found;
// unlinked, it loses the meeting and stays as the agency keeps it, and
// unlinking again, or from a meeting gone, is done.
func TestAnAgencysContactIsUnlinkedNotDeleted(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.client(t, "pat-na1-test")
	ctx := context.Background()
	theirs := f.fake.AddContact(map[string]string{"email": "office@agency.example", "firstname": "Front", "lastname": "Desk"})
	id := f.meeting(t, c)
	got, err := c.Link(ctx, id, crm.Caller{Name: "Jeanne Dupont", Email: "office@agency.example"})
	require.NoError(t, err)
	require.Equal(t, crm.Linked{ContactID: theirs}, got)
	require.Equal(t, []string{theirs}, f.fake.Meetings()[0].Contacts)

	require.NoError(t, c.Unlink(ctx, theirs, []string{id, "80000009999"}))
	require.NoError(t, c.Unlink(ctx, theirs, []string{id}))
	require.Empty(t, f.fake.Meetings()[0].Contacts)
	people := f.fake.Contacts()
	require.Len(t, people, 1)
	require.Equal(t, map[string]string{"email": "office@agency.example", "firstname": "Front", "lastname": "Desk"},
		map[string]string{"email": people[0].Properties["email"], "firstname": people[0].Properties["firstname"],
			"lastname": people[0].Properties["lastname"]})
}
