package hubspot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/retry"
)

// The wire shapes, as HubSpot's CRM v3 OpenAPI documents name them
// (BatchInputSimplePublicObjectBatchInputUpsert, SimplePublicUpsertObject,
// Error); TestRequestsMatchTheSDK checks them against the SDK's models.

const meetingsPath = "/crm/v3/objects/meetings"

type batchUpsert struct {
	Inputs []upsertInput `json:"inputs"`
}

type upsertInput struct {
	ID         string            `json:"id"`
	IDProperty string            `json:"idProperty"`
	Properties map[string]string `json:"properties"`
}

// object is what the adapter reads of a SimplePublicObject (and of the
// upsert's SimplePublicUpsertObject).
type object struct {
	ID           string            `json:"id"`
	Properties   map[string]string `json:"properties"`
	Associations map[string]struct {
		Results []struct {
			ID string `json:"id"`
		} `json:"results"`
	} `json:"associations,omitempty"`
}

// searchRequest is a PublicObjectSearchRequest: filter groups are OR'd,
// the filters of one AND'd.
// searchRequest is a PublicObjectSearchRequest, whose every field but
// query HubSpot's document requires: After "0" is the first page, and
// Sorts empty is HubSpot's order.
type searchRequest struct {
	FilterGroups []filterGroup `json:"filterGroups"`
	Properties   []string      `json:"properties"`
	Limit        int           `json:"limit"`
	After        string        `json:"after"`
	Sorts        []string      `json:"sorts"`
}

type filterGroup struct {
	Filters []filter `json:"filters"`
}

type filter struct {
	PropertyName string `json:"propertyName"`
	Operator     string `json:"operator"`
	Value        string `json:"value"`
}

// searchResult is a CollectionResponseWithTotalSimplePublicObject.
type searchResult struct {
	Total   int      `json:"total"`
	Results []object `json:"results"`
}

// gdprDelete is a PublicGdprDeleteInput.
type gdprDelete struct {
	ObjectID   string `json:"objectId"`
	IDProperty string `json:"idProperty,omitempty"`
}

// batchResult is a BatchResponseSimplePublicUpsertObject, and its
// WithErrors form (207).
type batchResult struct {
	Results   []object   `json:"results"`
	NumErrors int        `json:"numErrors"`
	Errors    []apiError `json:"errors"`
}

// err is a batch answered 207 with errors, or without its one result.
func (b batchResult) err() error {
	if b.NumErrors > 0 || len(b.Errors) > 0 {
		e := b.Errors[0]
		status, _ := strconv.Atoi(e.Status)
		if status == 0 {
			status = http.StatusBadRequest
		}
		return &crm.StatusError{Code: status, Body: e.Category + ": " + e.Message}
	}
	if len(b.Results) != 1 {
		return fmt.Errorf("hubspot answered %d results for one input", len(b.Results))
	}
	return nil
}

// apiError is HubSpot's error body (and a batch's StandardError); a 429
// adds policyName.
type apiError struct {
	Status     string `json:"status"`
	Message    string `json:"message"`
	Category   string `json:"category"`
	PolicyName string `json:"policyName,omitempty"`
}

// call sends one request within the process's budget and decodes a 2xx
// answer into out (nil: none expected).
func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	if err := c.burst.Wait(ctx); err != nil {
		return err
	}
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.cfg.BaseURL+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	c.noteDaily(res.Header)
	data, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return err
	}
	switch {
	case res.StatusCode == http.StatusNotFound && method == http.MethodGet:
		return crm.ErrNotFound
	case res.StatusCode/100 != 2:
		return statusError(res, data)
	case out == nil || len(data) == 0:
		return nil
	}
	return json.Unmarshal(data, out)
}

// statusError reads a refusal. A 429 names its policy: the ten-second
// window passes within the interval HubSpot states, the day's does not
// within a mirror's hour of retries, so that one waits longest.
func statusError(res *http.Response, data []byte) error {
	se := &crm.StatusError{Code: res.StatusCode, Body: string(data), RetryAfter: retry.ParseAfter(res.Header)}
	var e apiError
	if res.StatusCode != http.StatusTooManyRequests || se.RetryAfter > 0 || json.Unmarshal(data, &e) != nil {
		return se
	}
	switch e.PolicyName {
	case "DAILY":
		se.RetryAfter = time.Hour
	default: // TEN_SECONDLY_ROLLING, and the search endpoint's per second
		se.RetryAfter = time.Second
		if ms, err := strconv.Atoi(res.Header.Get("X-HubSpot-RateLimit-Interval-Milliseconds")); err == nil && ms > 0 {
			se.RetryAfter = time.Duration(ms) * time.Millisecond
		}
	}
	return se
}

// noteDaily keeps what HubSpot says of the day's calls.
func (c *Client) noteDaily(h http.Header) {
	limit, err1 := strconv.Atoi(h.Get("X-HubSpot-RateLimit-Daily"))
	left, err2 := strconv.Atoi(h.Get("X-HubSpot-RateLimit-Daily-Remaining"))
	if err1 != nil || err2 != nil {
		return
	}
	c.mu.Lock()
	c.daily = dailyLimit{max: limit, remaining: left}
	c.mu.Unlock()
}
