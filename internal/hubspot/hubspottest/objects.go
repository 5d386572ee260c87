package hubspottest

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// builtin are the meeting properties HubSpot defines that the adapter
// writes; datetime ones take an ISO 8601 instant or Unix milliseconds.
var builtin = map[string]string{"hs_timestamp": "datetime", "hs_meeting_title": "string", "hs_meeting_body": "string",
	"hs_meeting_start_time": "datetime", "hs_meeting_end_time": "datetime", "hs_meeting_outcome": "enumeration"}

// outcomes are hs_meeting_outcome's options.
var outcomes = []string{"SCHEDULED", "COMPLETED", "RESCHEDULED", "NO_SHOW", "CANCELED"}

func decode(r *http.Request, v any) error {
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	if err != nil {
		return refuse(http.StatusBadRequest, "VALIDATION_ERROR", "Invalid input JSON on line 1: %v", err)
	}
	return nil
}

func (a *Account) createGroup(r *http.Request) (int, any, error) {
	var g struct{ Name, Label string }
	if err := decode(r, &g); err != nil {
		return 0, nil, err
	}
	switch {
	case g.Name == "" || g.Label == "":
		return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "name and label are required")
	case a.groups[g.Name]:
		return 0, nil, refuse(http.StatusConflict, "OBJECT_ALREADY_EXISTS", "A property group named '%s' already exists.", g.Name)
	}
	a.groups[g.Name] = true
	return http.StatusCreated, map[string]any{"name": g.Name, "label": g.Label, "displayOrder": -1, "archived": false}, nil
}

func (a *Account) createProperty(r *http.Request) (int, any, error) {
	var p struct {
		Name, Label, Type, FieldType, GroupName string
		HasUniqueValue                          bool
	}
	if err := decode(r, &p); err != nil {
		return 0, nil, err
	}
	switch {
	case p.Name == "" || p.Label == "" || p.Type == "" || p.FieldType == "" || p.GroupName == "":
		return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "name, label, type, fieldType and groupName are required")
	case !slices.Contains([]string{"bool", "date", "datetime", "enumeration", "number", "phone_number", "string"}, p.Type):
		return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "type %q is not one of the property types", p.Type)
	case !a.groups[p.GroupName]:
		return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "property group %s does not exist", p.GroupName)
	case builtin[p.Name] != "" || a.props[p.Name].Name != "":
		return 0, nil, refuse(http.StatusConflict, "OBJECT_ALREADY_EXISTS", "A property named '%s' already exists.", p.Name)
	}
	a.props[p.Name] = property(p)
	return http.StatusCreated, map[string]any{"name": p.Name, "label": p.Label, "type": p.Type, "fieldType": p.FieldType,
		"groupName": p.GroupName, "hasUniqueValue": p.HasUniqueValue}, nil
}

func (a *Account) upsert(r *http.Request) (int, any, error) {
	var in struct {
		Inputs []struct {
			ID         string            `json:"id"`
			IDProperty string            `json:"idProperty"`
			Properties map[string]string `json:"properties"`
		} `json:"inputs"`
	}
	if err := decode(r, &in); err != nil {
		return 0, nil, err
	}
	if len(in.Inputs) == 0 || len(in.Inputs) > 100 {
		return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "inputs must hold 1 to 100 objects, not %d", len(in.Inputs))
	}
	now := a.Now().UTC()
	var results []any
	for _, input := range in.Inputs {
		if !a.props[input.IDProperty].HasUniqueValue {
			return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "%s is not a property with unique values", input.IDProperty)
		}
		props, err := a.valid(input.Properties)
		if err != nil {
			return 0, nil, err
		}
		props[input.IDProperty] = input.ID
		m, created := a.find(input.IDProperty, input.ID), false
		if m == nil {
			if props["hs_timestamp"] == "" {
				return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "hs_timestamp is required to create a meeting")
			}
			a.seq++
			m, created = &meeting{ID: strconv.Itoa(80000000000 + a.seq), Properties: map[string]string{}, CreatedAt: now}, true
			m.Properties["hs_createdate"] = stamp(now)
			a.meetings[m.ID] = m
		}
		for k, v := range props {
			m.Properties[k] = v
		}
		m.UpdatedAt = now
		m.Properties["hs_object_id"], m.Properties["hs_lastmodifieddate"] = m.ID, stamp(now)
		out := m.view(nil)
		out["new"] = created
		results = append(results, out)
	}
	return http.StatusOK, map[string]any{"status": "COMPLETE", "results": results,
		"startedAt": stamp(now), "completedAt": stamp(now)}, nil
}

// valid checks every value against its property, and normalises
// datetimes to HubSpot's ISO form.
func (a *Account) valid(in map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range in {
		kind := builtin[k]
		if kind == "" && a.props[k].Name != "" {
			kind = a.props[k].Type
		}
		switch {
		case kind == "":
			return nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "Property values were not valid: Property %q does not exist", k)
		case kind == "enumeration" && v != "" && !slices.Contains(outcomes, v):
			return nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "Property values were not valid: %s was not one of the allowed options", v)
		case kind == "datetime" && v != "":
			t, err := instant(v)
			if err != nil {
				return nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "Property values were not valid: %s is not a valid date for %s", v, k)
			}
			v = stamp(t)
		}
		out[k] = v
	}
	return out, nil
}

func instant(v string) (time.Time, error) {
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	return time.Parse(time.RFC3339, v)
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func (a *Account) get(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	var m *meeting
	if name := q.Get("idProperty"); name != "" {
		if !a.props[name].HasUniqueValue {
			return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "%s is not a property with unique values", name)
		}
		m = a.find(name, r.PathValue("id"))
	} else {
		m = a.meetings[r.PathValue("id")]
	}
	if m == nil {
		return 0, nil, refuse(http.StatusNotFound, "OBJECT_NOT_FOUND", "Object not found.  objectId are usually numeric.")
	}
	var names []string
	if p := q.Get("properties"); p != "" {
		names = strings.Split(p, ",")
	}
	return http.StatusOK, m.view(names), nil
}

// view is the meeting as a SimplePublicObject with the properties asked
// for (none: HubSpot's few defaults).
func (m *meeting) view(names []string) map[string]any {
	if names == nil {
		names = []string{"hs_createdate", "hs_lastmodifieddate", "hs_object_id", "hs_timestamp", "hs_meeting_title"}
		for k := range m.Properties {
			names = append(names, k)
		}
	}
	props := map[string]*string{}
	for _, n := range names {
		if v, ok := m.Properties[n]; ok {
			props[n] = &v
		} else {
			props[n] = nil
		}
	}
	return map[string]any{"id": m.ID, "properties": props, "createdAt": stamp(m.CreatedAt),
		"updatedAt": stamp(m.UpdatedAt), "archived": false}
}
