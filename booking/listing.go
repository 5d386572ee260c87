package booking

import (
	"time"
)

// Cursor is a position in BookingsStarting's order.
type Cursor struct {
	StartsAt   time.Time
	RequestKey string
}

// NextPage is where a listing in that order goes on after page, one page
// of at most limit: nil once a page comes back short, the listing's last.
func NextPage(page []Booking, limit int) *Cursor {
	if limit <= 0 || len(page) < limit {
		return nil
	}
	last := page[len(page)-1]
	return &Cursor{StartsAt: last.Intent.StartsAt, RequestKey: last.RequestKey}
}

// ListQuery filters a listing of bookings: those starting in [From, To),
// of a property, an agent and a status when given, one page of at most
// Limit after the cursor.
type ListQuery struct {
	PropertyID, AgentID string
	From, To            time.Time
	Status              Status
	After               Cursor
	Limit               int
}

// Validate refuses a listing that cannot be answered in one page.
func (q *ListQuery) Validate(maxWindow time.Duration, maxPage int) error {
	switch {
	case !q.To.After(q.From) || q.To.Sub(q.From) > maxWindow:
		return Rejectf(CodeInvalidWindow, "from must be before to, at most %d days apart", int(maxWindow.Hours()/24))
	case q.Limit < 0 || q.Limit > maxPage:
		return Rejectf(CodeInvalidWindow, "limit must be 1 to %d", maxPage)
	case q.Status != "" && !q.Status.Known():
		return Rejectf(CodeInvalidWindow, "status %q is not a booking status", q.Status)
	}
	if q.Limit == 0 {
		q.Limit = 50
	}
	return nil
}
