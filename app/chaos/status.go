package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/bookingsaga/bookingsaga/receipt"
)

// A read the API did not admit (503 with Retry-After: at capacity, as
// after an outage, while its limit grows back) is asked again after the
// wait it names, as an agent would.
func status(ctx context.Context, url, apiKey, key string) (*receipt.Receipt, error) {
	for range 30 {
		r, wait, err := statusOnce(ctx, url, apiKey, key)
		if wait == 0 {
			return r, err
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("status of %s: never admitted", key)
}

// statusOnce asks once; wait is the Retry-After of an answer not admitted.
func statusOnce(ctx context.Context, url, apiKey, key string) (_ *receipt.Receipt, wait time.Duration, _ error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/bookings/"+key, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("status of %s: %w", key, err)
	}
	defer res.Body.Close()
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && res.StatusCode == http.StatusServiceUnavailable {
		return nil, time.Duration(s) * time.Second, nil
	}
	if res.StatusCode == http.StatusNotFound {
		return nil, 0, nil
	}
	var r receipt.Receipt
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil || res.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("status of %s: http %d: %v", key, res.StatusCode, err)
	}
	return &r, 0, nil
}
