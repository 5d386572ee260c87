package hubspot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/bookingsaga/bookingsaga/internal/crm"
)

// The caller as a HubSpot contact, where they agreed to be kept on file:
// found (the contact linked before, which HubSpot answers as the one staff
// merged it into; else a contact with the caller's exact email, or their
// phone and name), created where none is found, and the meeting
// associated with it. A phone alone is weak identity (a family's
// landline, an office's switchboard): it never links a caller to someone
// else's contact. The contacts the service makes carry propCaller; only
// those are ever deleted.

const contactsPath = "/crm/v3/objects/contacts"

// propCaller marks a contact the service made, and is the unique id its
// creation upserts by (callerKey), so that a create resent after a lost
// reply is the same contact and never touches one the agency keeps.
const propCaller = "bookingsaga_caller"

// propCallerPhone is the unique id of the contacts earlier builds made
// without an email: it marks them as the service's too.
const propCallerPhone = "bookingsaga_phone"

// Link finds or creates c's contact and associates meetingID with it.
func (c *Client) Link(ctx context.Context, meetingID string, p crm.Caller) (crm.Linked, error) {
	if p.Email == "" && p.Phone == "" {
		return crm.Linked{}, fmt.Errorf("hubspot link %s: a caller on file needs an email or a phone", meetingID)
	}
	found, ok, err := c.findContact(ctx, p)
	if err == nil && !ok {
		found, err = c.createContact(ctx, p)
	}
	if err == nil {
		path := "/crm/v4/objects/meetings/" + url.PathEscape(meetingID) + "/associations/default/contacts/" + url.PathEscape(found.ID)
		err = c.cfg.Retry.Do(ctx, crm.Classify, func(ctx context.Context) error {
			return c.call(ctx, http.MethodPut, path, nil, nil)
		})
	}
	if err != nil {
		return crm.Linked{}, fmt.Errorf("hubspot link %s: %w", meetingID, err)
	}
	return crm.Linked{ContactID: found.ID, Created: ours(found)}, nil
}

// ours reports a contact the service made.
func ours(o object) bool {
	return o.Properties[propCaller] != "" || o.Properties[propCallerPhone] != ""
}

// contactProps are what a contact is read with: enough to tell whose it is.
var contactProps = []string{"email", propCaller, propCallerPhone}

// findContact is the contact linked before (its id reads as the contact
// it was merged into), else one with the caller's email, or their phone
// and name; ok is false when there is none.
func (c *Client) findContact(ctx context.Context, p crm.Caller) (object, bool, error) {
	if p.ContactID != "" {
		var obj object
		err := c.cfg.Retry.Do(ctx, crm.Classify, func(ctx context.Context) error {
			return c.call(ctx, http.MethodGet, contactsPath+"/"+url.PathEscape(p.ContactID)+"?properties=hs_merged_object_ids,"+
				strings.Join(contactProps, ","), nil, &obj)
		})
		if err == nil {
			return obj, true, nil
		}
		if !errors.Is(err, crm.ErrNotFound) { // deleted by staff: look again
			return object{}, false, err
		}
	}
	if err := c.ensureContactSchema(ctx); err != nil {
		return object{}, false, err
	}
	var res searchResult
	err := c.cfg.Retry.Do(ctx, crm.Classify, func(ctx context.Context) error {
		return c.call(ctx, http.MethodPost, contactsPath+"/search", searchRequest{FilterGroups: sameCaller(p), Properties: contactProps,
			Limit: 1, After: "0", Sorts: []string{}}, &res)
	})
	if err != nil || len(res.Results) == 0 {
		return object{}, false, err
	}
	return res.Results[0], true, nil
}

// sameCaller are the searches that find p's contact: the exact email, the
// phone (as phone or mobile phone) with the name, or the service's own
// contact for p.
func sameCaller(p crm.Caller) []filterGroup {
	eq := func(name, value string) filter { return filter{PropertyName: name, Operator: "EQ", Value: value} }
	groups := []filterGroup{{Filters: []filter{eq(propCaller, callerKey(p))}}}
	if p.Email != "" {
		groups = append(groups, filterGroup{Filters: []filter{eq("email", p.Email)}})
	}
	first, last := splitName(p.Name)
	if p.Phone == "" || first == "" {
		return groups
	}
	for _, phone := range []string{"phone", "mobilephone"} {
		g := filterGroup{Filters: []filter{eq(phone, p.Phone), eq("firstname", first)}}
		if last != "" {
			g.Filters = append(g.Filters, eq("lastname", last))
		}
		groups = append(groups, g)
	}
	return groups
}

// callerKey names p's own contact: their email, else their phone and
// name, hashed (staff see the property; it holds no personal data).
func callerKey(p crm.Caller) string {
	h := sha256.New()
	if p.Email != "" {
		h.Write([]byte("email\x00" + strings.ToLower(strings.TrimSpace(p.Email))))
	} else {
		h.Write([]byte("phone\x00" + p.Phone + "\x00" + strings.ToLower(strings.Join(strings.Fields(p.Name), " "))))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// createContact upserts the caller's own contact by propCaller, so a
// resend is the same contact. An email the agency's contact has (the
// search had not seen it yet) is refused by HubSpot, and the next try
// finds that contact.
func (c *Client) createContact(ctx context.Context, p crm.Caller) (object, error) {
	first, last := splitName(p.Name)
	props := map[string]string{"firstname": first, "lastname": last, "phone": p.Phone}
	if p.Email != "" {
		props["email"] = p.Email
	}
	in := upsertInput{ID: callerKey(p), IDProperty: propCaller, Properties: props}
	var res batchResult
	err := c.cfg.Retry.Do(ctx, crm.Classify, func(ctx context.Context) error {
		return c.call(ctx, http.MethodPost, contactsPath+"/batch/upsert", batchUpsert{Inputs: []upsertInput{in}}, &res)
	})
	if err == nil {
		err = res.err()
	}
	if err != nil {
		return object{}, err
	}
	out := res.Results[0]
	if out.Properties == nil {
		out.Properties = map[string]string{}
	}
	out.Properties[propCaller] = in.ID
	return out, nil
}

// splitName is HubSpot's firstname and lastname: the last word is the
// family name, as most of the agency's callers say theirs.
func splitName(name string) (string, string) {
	name = strings.TrimSpace(name)
	i := strings.LastIndexByte(name, ' ')
	if i < 0 {
		return name, ""
	}
	return strings.TrimSpace(name[:i]), name[i+1:]
}

// Unlink removes the association of each meeting with a contact the
// service did not make; the contact stays as the agency keeps it (the
// service wrote nothing on it). A meeting or a contact gone already is
// unlinked.
func (c *Client) Unlink(ctx context.Context, contactID string, meetingIDs []string) error {
	for _, m := range meetingIDs {
		path := "/crm/v4/objects/meetings/" + url.PathEscape(m) + "/associations/contacts/" + url.PathEscape(contactID)
		err := c.cfg.Retry.Do(ctx, crm.Classify, func(ctx context.Context) error {
			return c.call(ctx, http.MethodDelete, path, nil, nil)
		})
		var se *crm.StatusError
		if err != nil && !(errors.As(err, &se) && se.Code == http.StatusNotFound) {
			return fmt.Errorf("hubspot unlink contact %s: %w", contactID, err)
		}
	}
	return nil
}

// Forget deletes a contact through HubSpot's GDPR delete, which removes
// it for good with what is associated to it by HubSpot's rules; the
// meetings, which hold references only, stay. A contact gone already
// (404) is forgotten.
func (c *Client) Forget(ctx context.Context, contactID string) error {
	err := c.cfg.Retry.Do(ctx, crm.Classify, func(ctx context.Context) error {
		return c.call(ctx, http.MethodPost, contactsPath+"/gdpr-delete", gdprDelete{ObjectID: contactID}, nil)
	})
	var se *crm.StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("hubspot forget contact %s: %w", contactID, err)
	}
	return nil
}

// ensureContactSchema creates propCallerPhone on contacts.
func (c *Client) ensureContactSchema(ctx context.Context) error {
	return c.ensure(ctx, "contacts", &c.contactSchema, []string{propCaller, propCallerPhone}, propCaller)
}
