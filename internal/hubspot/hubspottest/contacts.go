package hubspottest

import (
	"net/http"
	"sort"
)

// The contacts' search (PublicObjectSearchRequest, EQ filters only, which
// is all the adapter sends), their GDPR delete, and the v4 default
// association of a meeting with a contact.

// searchLimits are HubSpot's: five filter groups of at most six filters,
// eighteen filters in all, 200 results a page.
const maxGroups, maxGroupFilters, maxFilters, maxLimit = 5, 6, 18, 200

func (a *Account) search(r *http.Request) (int, any, error) {
	var in struct {
		FilterGroups []struct {
			Filters []struct{ PropertyName, Operator, Value string } `json:"filters"`
		} `json:"filterGroups"`
		Properties []string `json:"properties"`
		Limit      int      `json:"limit"`
	}
	if err := decode(r, &in); err != nil {
		return 0, nil, err
	}
	total := 0
	for _, g := range in.FilterGroups {
		total += len(g.Filters)
		if len(g.Filters) > maxGroupFilters {
			return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "a filter group may hold at most %d filters", maxGroupFilters)
		}
		for _, f := range g.Filters {
			if f.Operator != "EQ" || f.PropertyName == "" {
				return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "filter %s %s is not supported by this fake", f.PropertyName, f.Operator)
			}
		}
	}
	if len(in.FilterGroups) > maxGroups || total > maxFilters || in.Limit < 0 || in.Limit > maxLimit {
		return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "at most %d filter groups, %d filters and a limit of %d", maxGroups, maxFilters, maxLimit)
	}
	if in.Limit == 0 {
		in.Limit = 10
	}
	ids := make([]string, 0, len(a.objects[contacts]))
	for id := range a.objects[contacts] {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	results := []any{}
	for _, id := range ids {
		if c := a.objects[contacts][id]; len(results) < in.Limit && matches(c.Properties, in.FilterGroups) {
			results = append(results, c.view(in.Properties))
		}
	}
	return http.StatusOK, map[string]any{"total": len(results), "results": results}, nil
}

// matches is OR over the groups, AND within one.
func matches(props map[string]string, groups []struct {
	Filters []struct{ PropertyName, Operator, Value string } `json:"filters"`
}) bool {
	for _, g := range groups {
		all := len(g.Filters) > 0
		for _, f := range g.Filters {
			all = all && props[f.PropertyName] == f.Value
		}
		if all {
			return true
		}
	}
	return false
}

// gdprDelete deletes a contact for good, by id or by email: its
// associations go with it. An email HubSpot doesn't know is blocklisted
// instead, which the fake answers the same way.
func (a *Account) gdprDelete(r *http.Request) (int, any, error) {
	var in struct{ ObjectID, IDProperty string }
	if err := decode(r, &in); err != nil {
		return 0, nil, err
	}
	var c *object
	switch in.IDProperty {
	case "", "hs_object_id":
		c = a.objects[contacts][in.ObjectID]
		if c == nil && a.merged[in.ObjectID] != "" {
			c = a.objects[contacts][a.merged[in.ObjectID]]
		}
	case "email":
		c = a.find(contacts, "email", in.ObjectID)
	default:
		return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "idProperty must be email or absent")
	}
	if c == nil && in.IDProperty == "" {
		return 0, nil, refuse(http.StatusNotFound, "OBJECT_NOT_FOUND", "Object not found.  objectId are usually numeric.")
	}
	if c != nil {
		delete(a.objects[contacts], c.ID)
		touched := map[string]map[string]bool{}
		for meeting, set := range a.assoc {
			if set[c.ID] {
				delete(set, c.ID)
				touched[meeting] = copySet(set)
			}
		}
		a.stage(change{Kind: contacts, Gone: c.ID, Assoc: touched})
	}
	return http.StatusNoContent, nil, nil
}

// associate gives a meeting the default association with a contact.
func (a *Account) associate(r *http.Request) (int, any, error) {
	m, c := a.objects[meetings][r.PathValue("id")], a.objects[contacts][r.PathValue("contactId")]
	if m == nil || c == nil {
		return 0, nil, refuse(http.StatusNotFound, "OBJECT_NOT_FOUND", "Object not found.  objectId are usually numeric.")
	}
	if a.assoc[m.ID] == nil {
		a.assoc[m.ID] = map[string]bool{}
	}
	a.assoc[m.ID][c.ID] = true
	a.stage(change{Kind: meetings, Assoc: map[string]map[string]bool{m.ID: copySet(a.assoc[m.ID])}})
	now := stamp(a.Now())
	id := func(s string) map[string]string { return map[string]string{"id": s} }
	return http.StatusOK, map[string]any{"status": "COMPLETE", "startedAt": now, "completedAt": now,
		"results": []any{map[string]any{"from": id(m.ID), "to": id(c.ID),
			"associationSpec": map[string]any{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 200}}}}, nil
}

// dissociate removes every association between a meeting and a contact
// (v4 "Delete", answered 204 with no body).
func (a *Account) dissociate(r *http.Request) (int, any, error) {
	m, c := a.objects[meetings][r.PathValue("id")], a.objects[contacts][r.PathValue("contactId")]
	if m == nil || c == nil {
		return 0, nil, refuse(http.StatusNotFound, "OBJECT_NOT_FOUND", "Object not found.  objectId are usually numeric.")
	}
	if a.assoc[m.ID][c.ID] {
		delete(a.assoc[m.ID], c.ID)
		a.stage(change{Kind: meetings, Assoc: map[string]map[string]bool{m.ID: copySet(a.assoc[m.ID])}})
	}
	return http.StatusNoContent, nil, nil
}

func copySet(s map[string]bool) map[string]bool {
	out := make(map[string]bool, len(s))
	for k, v := range s {
		out[k] = v
	}
	return out
}
