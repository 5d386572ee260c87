package sagaclient

import (
	"errors"
	"sync/atomic"
)

// ErrOverloaded means a booking call was not sent: as many as the client
// admits are in flight already. Nothing reached Temporal, so the same call
// may be sent again, with the same request_key, in a moment.
var ErrOverloaded = errors.New("bookingsaga is at capacity: the call was not sent")

// gate admits a booking call to Temporal only while fewer than its limit
// are in flight. Past saturation every admitted call would wait the whole
// commit wait to hear pending_reconciliation and slow the others down;
// refusing the excess at once, before anything is sent, keeps the
// admitted ones within the commit wait and tells the rest the truth (not
// sent, try again) within milliseconds. It never waits for a slot.
type gate struct {
	slots    chan struct{}
	inFlight atomic.Int64
	report   func(int)
}

func newGate(limit int, report func(int)) *gate {
	if limit <= 0 {
		return nil
	}
	return &gate{slots: make(chan struct{}, limit), report: report}
}

// enter takes a slot, or reports none free.
func (g *gate) enter() bool {
	if g == nil {
		return true
	}
	select {
	case g.slots <- struct{}{}:
		g.changed(g.inFlight.Add(1))
		return true
	default:
		return false
	}
}

// leave frees the slot enter took.
func (g *gate) leave() {
	if g == nil {
		return
	}
	g.changed(g.inFlight.Add(-1))
	<-g.slots
}

func (g *gate) changed(n int64) {
	if g.report != nil {
		g.report(int(n))
	}
}
