package booking

import (
	"errors"
	"time"
)

// WebhookEndpoint is a registered webhook receiver.
type WebhookEndpoint struct {
	ID           string     `json:"id"`
	URL          string     `json:"url"`
	Secret       []byte     `json:"-"`
	DeliveredAt  *time.Time `json:"delivered_at,omitempty"`
	FailingSince *time.Time `json:"failing_since,omitempty"`
	LastError    string     `json:"last_error,omitempty"`
	Undelivered  int        `json:"undelivered"`
	Paused       bool       `json:"paused,omitempty"`
}

// ErrNoEndpoint means no webhook endpoint has the id.
var ErrNoEndpoint = errors.New("no such webhook endpoint")
