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

// builtin are the properties HubSpot defines that the adapter writes or
// reads, by object type; datetime ones take an ISO 8601 instant or Unix
// milliseconds.
var builtin = map[string]map[string]string{
	meetings: {"hs_timestamp": "datetime", "hs_meeting_title": "string", "hs_meeting_body": "string",
		"hs_meeting_start_time": "datetime", "hs_meeting_end_time": "datetime", "hs_meeting_outcome": "enumeration"},
	contacts: {"email": "string", "firstname": "string", "lastname": "string", "phone": "string", "mobilephone": "string",
		"hs_merged_object_ids": "enumeration"},
}

// unique reports whether kind's property name takes unique values: a
// custom one created so, or a contact's email, which HubSpot keeps unique
// itself.
func (a *Account) unique(kind, name string) bool {
	return a.props[kind][name].HasUniqueValue || (kind == contacts && name == "email")
}

// objectType is the path's object type, one the fake keeps.
func objectType(r *http.Request) (string, error) {
	kind := r.PathValue("objectType")
	if kind != meetings && kind != contacts {
		return "", refuse(http.StatusBadRequest, "VALIDATION_ERROR", "Unable to infer object type from: %s", kind)
	}
	return kind, nil
}

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
	kind, err := objectType(r)
	if err == nil {
		err = decode(r, &g)
	}
	if err != nil {
		return 0, nil, err
	}
	switch {
	case g.Name == "" || g.Label == "":
		return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "name and label are required")
	case a.groups[kind][g.Name]:
		return 0, nil, refuse(http.StatusConflict, "OBJECT_ALREADY_EXISTS", "A property group named '%s' already exists.", g.Name)
	}
	a.groups[kind][g.Name] = true
	a.stage(change{Kind: kind, Group: g.Name})
	return http.StatusCreated, map[string]any{"name": g.Name, "label": g.Label, "displayOrder": -1, "archived": false}, nil
}

func (a *Account) createProperty(r *http.Request) (int, any, error) {
	var p struct {
		Name, Label, Type, FieldType, GroupName string
		HasUniqueValue                          bool
	}
	kind, err := objectType(r)
	if err == nil {
		err = decode(r, &p)
	}
	if err != nil {
		return 0, nil, err
	}
	switch {
	case p.Name == "" || p.Label == "" || p.Type == "" || p.FieldType == "" || p.GroupName == "":
		return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "name, label, type, fieldType and groupName are required")
	case !slices.Contains([]string{"bool", "date", "datetime", "enumeration", "number", "phone_number", "string"}, p.Type):
		return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "type %q is not one of the property types", p.Type)
	case !a.groups[kind][p.GroupName]:
		return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "property group %s does not exist", p.GroupName)
	case builtin[kind][p.Name] != "" || a.props[kind][p.Name].Name != "":
		return 0, nil, refuse(http.StatusConflict, "OBJECT_ALREADY_EXISTS", "A property named '%s' already exists.", p.Name)
	}
	prop := property(p)
	a.props[kind][p.Name] = prop
	a.stage(change{Kind: kind, Property: &prop})
	return http.StatusCreated, map[string]any{"name": p.Name, "label": p.Label, "type": p.Type, "fieldType": p.FieldType,
		"groupName": p.GroupName, "hasUniqueValue": p.HasUniqueValue, "description": "", "options": []any{}}, nil
}

// upsert is kind's batch upsert by a unique property: each input updates
// the object holding its id there, or creates one.
func (a *Account) upsert(kind string) func(r *http.Request) (int, any, error) {
	return func(r *http.Request) (int, any, error) {
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
			if !a.unique(kind, input.IDProperty) {
				return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "%s is not a property with unique values", input.IDProperty)
			}
			props, err := a.valid(kind, input.Properties)
			if err != nil {
				return 0, nil, err
			}
			props[input.IDProperty] = input.ID
			o, created := a.find(kind, input.IDProperty, input.ID), false
			if held := a.find(kind, "email", props["email"]); kind == contacts && held != nil && held != o {
				// Email is unique in HubSpot whatever the upsert is keyed by.
				return 0, nil, refuse(http.StatusConflict, "CONFLICT", "Contact already exists. Existing ID: %s", held.ID)
			}
			if o == nil {
				if kind == meetings && props["hs_timestamp"] == "" {
					return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "hs_timestamp is required to create a meeting")
				}
				o, created = a.create(kind, now), true
			}
			for k, v := range props {
				o.Properties[k] = v
			}
			o.UpdatedAt = now
			o.Properties["hs_lastmodifieddate"] = stamp(now)
			a.stage(change{Kind: kind, Put: o.copy()})
			out := o.view(nil)
			out["new"] = created
			results = append(results, out)
		}
		return http.StatusOK, map[string]any{"status": "COMPLETE", "results": results,
			"startedAt": stamp(now), "completedAt": stamp(now)}, nil
	}
}

func (o *object) copy() *object {
	c := *o
	c.Properties = make(map[string]string, len(o.Properties))
	for k, v := range o.Properties {
		c.Properties[k] = v
	}
	return &c
}

// create makes an empty object of kind; ids are numeric, as HubSpot's.
func (a *Account) create(kind string, now time.Time) *object {
	a.seq++
	base := 80000000000
	if kind == contacts {
		base = 100000000
	}
	o := &object{ID: strconv.Itoa(base + a.seq), CreatedAt: now}
	o.Properties = map[string]string{"hs_createdate": stamp(now), "hs_object_id": o.ID}
	a.objects[kind][o.ID] = o
	return o
}

// valid checks every value against its property, and normalises
// datetimes to HubSpot's ISO form.
func (a *Account) valid(object string, in map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range in {
		kind := builtin[object][k]
		if kind == "" && a.props[object][k].Name != "" {
			kind = a.props[object][k].Type
		}
		switch {
		case kind == "":
			return nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "Property values were not valid: Property %q does not exist", k)
		case k == "hs_merged_object_ids":
			return nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "Property values were not valid: %s is a read only property", k)
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

// get reads one object of kind, by id or by a unique property; a
// contact merged away reads as the one it became, and a meeting asked
// for its associations lists its contacts.
func (a *Account) get(kind string) func(r *http.Request) (int, any, error) {
	return func(r *http.Request) (int, any, error) {
		q := r.URL.Query()
		var o *object
		id := r.PathValue("id")
		switch name := q.Get("idProperty"); {
		case name != "" && !a.unique(kind, name):
			return 0, nil, refuse(http.StatusBadRequest, "VALIDATION_ERROR", "%s is not a property with unique values", name)
		case name != "":
			o = a.find(kind, name, id)
		case kind == contacts && a.merged[id] != "":
			o = a.objects[kind][a.merged[id]]
		default:
			o = a.objects[kind][id]
		}
		if o == nil {
			return 0, nil, refuse(http.StatusNotFound, "OBJECT_NOT_FOUND", "Object not found.  objectId are usually numeric.")
		}
		var names []string
		if p := q.Get("properties"); p != "" {
			names = strings.Split(p, ",")
		}
		out := o.view(names)
		if kind == meetings && slices.Contains(strings.Split(q.Get("associations"), ","), contacts) {
			var results []any
			for _, c := range a.associated(o.ID) {
				results = append(results, map[string]string{"id": c, "type": "meeting_event_to_contact"})
			}
			if results != nil {
				out["associations"] = map[string]any{contacts: map[string]any{"results": results}}
			}
		}
		return http.StatusOK, out, nil
	}
}

// view is the object as a SimplePublicObject with the properties asked
// for (none: HubSpot's few defaults).
func (m *object) view(names []string) map[string]any {
	if names == nil {
		names = []string{"hs_createdate", "hs_lastmodifieddate", "hs_object_id"}
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
