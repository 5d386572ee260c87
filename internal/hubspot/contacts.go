package hubspot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/bookingsaga/bookingsaga/internal/crm"
)

// The caller as a HubSpot contact, where they agreed to be kept on file:
// found (the contact linked before, which HubSpot answers as the one staff
// merged it into; else a contact with their email or phone), created
// where none is found, and the meeting associated with it.

const contactsPath = "/crm/v3/objects/contacts"

// propCallerPhone is the phone of a contact the adapter created without
// an email: unique, so that a create resent after a lost reply upserts
// the same contact (the search, eventually consistent, may not see it
// yet; email is unique in HubSpot already).
const propCallerPhone = "bookingsaga_phone"

// Link finds or creates c's contact and associates meetingID with it.
func (c *Client) Link(ctx context.Context, meetingID string, p crm.Caller) (string, error) {
	if p.Email == "" && p.Phone == "" {
		return "", fmt.Errorf("hubspot link %s: a caller on file needs an email or a phone", meetingID)
	}
	id, err := c.findContact(ctx, p)
	if err == nil && id == "" {
		id, err = c.createContact(ctx, p)
	}
	if err == nil {
		path := "/crm/v4/objects/meetings/" + url.PathEscape(meetingID) + "/associations/default/contacts/" + url.PathEscape(id)
		err = c.cfg.Retry.Do(ctx, crm.Classify, func(ctx context.Context) error {
			return c.call(ctx, http.MethodPut, path, nil, nil)
		})
	}
	if err != nil {
		return "", fmt.Errorf("hubspot link %s: %w", meetingID, err)
	}
	return id, nil
}

// findContact is the contact linked before (its id reads as the contact
// it was merged into), else one with the caller's email or phone, else "".
func (c *Client) findContact(ctx context.Context, p crm.Caller) (string, error) {
	if p.ContactID != "" {
		var obj object
		err := c.cfg.Retry.Do(ctx, crm.Classify, func(ctx context.Context) error {
			return c.call(ctx, http.MethodGet, contactsPath+"/"+url.PathEscape(p.ContactID)+"?properties=hs_merged_object_ids", nil, &obj)
		})
		if err == nil {
			return obj.ID, nil
		}
		if !errors.Is(err, crm.ErrNotFound) { // deleted by staff: look again
			return "", err
		}
	}
	var groups []filterGroup
	for _, f := range []struct{ name, value string }{{"email", p.Email}, {"phone", p.Phone}, {"mobilephone", p.Phone}, {propCallerPhone, p.Phone}} {
		if f.value != "" {
			groups = append(groups, filterGroup{Filters: []filter{{PropertyName: f.name, Operator: "EQ", Value: f.value}}})
		}
	}
	if err := c.ensureContactSchema(ctx); err != nil {
		return "", err
	}
	var res searchResult
	err := c.cfg.Retry.Do(ctx, crm.Classify, func(ctx context.Context) error {
		return c.call(ctx, http.MethodPost, contactsPath+"/search", searchRequest{FilterGroups: groups, Properties: []string{"email"}, Limit: 1, After: "0", Sorts: []string{}}, &res)
	})
	if err != nil || len(res.Results) == 0 {
		return "", err
	}
	return res.Results[0].ID, nil
}

// createContact upserts the caller by email, or by propCallerPhone, so a
// resend is the same contact.
func (c *Client) createContact(ctx context.Context, p crm.Caller) (string, error) {
	first, last := splitName(p.Name)
	props := map[string]string{"firstname": first, "lastname": last, "phone": p.Phone}
	in := upsertInput{ID: p.Email, IDProperty: "email", Properties: props}
	if p.Email == "" {
		in = upsertInput{ID: p.Phone, IDProperty: propCallerPhone, Properties: props}
	}
	var res batchResult
	err := c.cfg.Retry.Do(ctx, crm.Classify, func(ctx context.Context) error {
		return c.call(ctx, http.MethodPost, contactsPath+"/batch/upsert", batchUpsert{Inputs: []upsertInput{in}}, &res)
	})
	if err == nil {
		err = res.err()
	}
	if err != nil {
		return "", err
	}
	return res.Results[0].ID, nil
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
	return c.ensure(ctx, "contacts", &c.contactSchema, []string{propCallerPhone}, propCallerPhone)
}
