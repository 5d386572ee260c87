package booking

import (
	"time"

	"github.com/google/uuid"
)

// OutsideRules is a confirmed booking that its resource's hours or time
// off no longer allow.
type OutsideRules struct {
	RequestKey string    `json:"request_key"`
	ResourceID string    `json:"resource_id"`
	StartsAt   time.Time `json:"starts_at"`
	EndsAt     time.Time `json:"ends_at"`
	Reason     string    `json:"reason"`
	// FreeAgents, when the rules are the booking's agent's, are the
	// members of the agent's teams free then: whom it could be reassigned to.
	FreeAgents []string `json:"free_agents,omitempty"`
}

// Flag is drift a human has to look at.
type Flag struct {
	ID         int64      `json:"id"`
	RequestKey string     `json:"request_key"`
	BookingID  uuid.UUID  `json:"booking_id"`
	Kind       string     `json:"kind"`
	CalendarID string     `json:"calendar_id"`
	EventID    string     `json:"event_id"`
	Detail     string     `json:"detail"`
	FoundAt    time.Time  `json:"found_at"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
	Note       string     `json:"note,omitempty"`
}
