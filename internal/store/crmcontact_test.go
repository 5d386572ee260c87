package store

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// onFile commits key with a contact the caller agreed to keep on file.
func (f *fixture) onFile(t *testing.T, key string, keep bool) {
	t.Helper()
	c := ada
	c.KeepOnFile = keep
	sealed, err := f.store.SealContact(f.ctx, key, c, "Europe/Paris")
	require.NoError(t, err)
	req := commitReq(key, intent("paris", agent(0), "10:00", "10:30"))
	req.Contact = sealed
	_, err = f.store.Commit(f.ctx, req)
	require.NoError(t, err)
}

// A caller on file is their contact and the CRM contact linked to it,
// from a reschedule's new booking too; one who didn't agree, or was
// erased, is not on file.
func TestACallerOnFileIsFoundAcrossAReschedule(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.onFile(t, "req_file", true)
	f.onFile(t, "req_nofile", false)
	_, err := f.store.CallerOnFile(f.ctx, "req_nofile")
	require.ErrorIs(t, err, booking.ErrNoContact)

	on, err := f.store.CallerOnFile(f.ctx, "req_file")
	require.NoError(t, err)
	require.Equal(t, booking.OnFile{OwnerKey: "req_file", Contact: on.Contact}, on)
	require.Equal(t, "Ada Lovelace", on.Contact.Name)
	forgotten, err := f.store.RecordCRMContact(f.ctx, "req_file", booking.CRMContact{CRM: "hubspot", ContactRef: "101"})
	require.NoError(t, err)
	require.False(t, forgotten)

	f.booked(t, "req_moved", moving("req_file", intent("paris", agent(0), "16:00", "16:30")))
	on, err = f.store.CallerOnFile(f.ctx, "req_moved")
	require.NoError(t, err)
	require.Equal(t, "req_file", on.OwnerKey)
	require.Equal(t, booking.CRMContact{CRM: "hubspot", ContactRef: "101"}, on.Linked)

	// Staff merged 101 into 202: the link found 202.
	_, err = f.store.RecordCRMContact(f.ctx, "req_file", booking.CRMContact{CRM: "hubspot", ContactRef: "202"})
	require.NoError(t, err)
	on, err = f.store.CallerOnFile(f.ctx, "req_moved")
	require.NoError(t, err)
	require.Equal(t, "202", on.Linked.ContactRef)

	require.NoError(t, f.store.EraseContact(f.ctx, "req_moved", "request"))
	_, err = f.store.CallerOnFile(f.ctx, "req_moved")
	require.ErrorIs(t, err, booking.ErrNoContact, "erased: not on file")
}

// An erasure lists the caller's CRM contact to forget until the CRM
// deleted it; a link that raced the erasure learns the caller is
// forgotten, so it deletes what it found too.
func TestAnErasedCallersCRMContactIsForgottenOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.onFile(t, "req_gone", true)
	f.onFile(t, "req_kept", true)
	for key, ref := range map[string]string{"req_gone": "301", "req_kept": "302"} {
		_, err := f.store.RecordCRMContact(f.ctx, key, booking.CRMContact{CRM: "hubspot", ContactRef: ref, Created: key == "req_gone"})
		require.NoError(t, err)
	}
	_, err := f.pool.Exec(f.ctx, `UPDATE booking SET crm_ref = 'meeting-1' WHERE request_key = 'req_gone'`)
	require.NoError(t, err)
	due, err := f.store.CRMContactsToForget(f.ctx, 10)
	require.NoError(t, err)
	require.Empty(t, due, "nobody erased yet")

	require.NoError(t, f.store.EraseContact(f.ctx, "req_gone", "request"))
	due, err = f.store.CRMContactsToForget(f.ctx, 10)
	require.NoError(t, err)
	require.Equal(t, []booking.CRMContact{{RequestKey: "req_gone", CRM: "hubspot", ContactRef: "301", Created: true,
		Records: []string{"meeting-1"}}}, due, "made by the service, with the caller's meetings")

	require.NoError(t, f.store.ForgotCRMContact(f.ctx, "req_gone", "301"))
	due, err = f.store.CRMContactsToForget(f.ctx, 10)
	require.NoError(t, err)
	require.Empty(t, due)

	forgotten, err := f.store.RecordCRMContact(f.ctx, "req_gone", booking.CRMContact{CRM: "hubspot", ContactRef: "303"})
	require.NoError(t, err)
	require.True(t, forgotten, "a late link learns the caller was forgotten")
	due, err = f.store.CRMContactsToForget(f.ctx, 10)
	require.NoError(t, err)
	require.Empty(t, due)
}

// A property names its agency's CRM; left out, it names none (the
// default's).
func TestAPropertyKeepsItsAgencysCRM(t *testing.T) {
	t.Parallel()
	f := setup(t)
	flat := booking.Resource{ID: "lyon-1", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", CRM: "hubspot", CalendarID: "lyon-1@calendar.test"}
	require.NoError(t, f.store.UpsertResource(f.ctx, flat))
	got, err := f.store.Resource(f.ctx, "lyon-1")
	require.NoError(t, err)
	require.Equal(t, "hubspot", got.CRM)
	listed, err := f.store.CalendarResources(f.ctx)
	require.NoError(t, err)
	require.Contains(t, listed, booking.Resource{ID: "lyon-1", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", CRM: "hubspot",
		CalendarID: "lyon-1@calendar.test", CalendarProvider: booking.ProviderGoogle})
	flat.CRM = ""
	require.NoError(t, f.store.UpsertResource(f.ctx, flat))
	got, err = f.store.Resource(f.ctx, "lyon-1")
	require.NoError(t, err)
	require.Empty(t, got.CRM)
}
