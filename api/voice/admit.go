package voice

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// One tool call is one unit of cost, whichever platform carries it and
// however many one request carries (a Vapi message may hold several).

// atCapacity is the answer to a call not run because too many are: at
// once, with a line the agent can say while it waits to send it again.
const atCapacity = "bookingsaga is at capacity this second, so nothing was sent and nothing changed. " +
	"Say \"One moment, I'll try that again\", then send the same call again in a second or two"

// admit charges one tool call to the key its request came in under and
// takes a place among the tool calls running in this process; done gives
// the place back. A call refused either way did nothing: it is answered
// not done, and the same call again later is safe.
//
// Every tool asks something of the store, Temporal or a calendar, so
// every one passes the gate, reads included. A booking call repeated
// within the limit's window is free (it lands on the same saga); a read
// repeated is charged, as it is asked again.
func (t *Tools) admit(ctx context.Context, name, callID string, raw json.RawMessage) (done func(), refused *Answer) {
	call := append([]byte(name+"\n"+callID+"\n"), raw...)
	if e := edge.Charge(ctx, call, writes(name)); e != nil {
		a := notDone(booking.Code(e.Code), e.Message)
		return nil, &a
	}
	caller := edge.Admitted(ctx)
	if !t.set.Admission.Enter(caller) {
		t.set.Shed(ctx)
		a := notDone(booking.CodeUnavailable, atCapacity)
		return nil, &a
	}
	start := time.Now()
	return func() { t.set.Admission.Done(caller, time.Since(start)) }, nil
}

// writes reports whether the tool name makes or changes something, so
// that its repeat is idempotent by its key; an unknown name reads.
func writes(name string) bool {
	for _, d := range toolDefs {
		if d.name == name {
			return d.effect != readOnly
		}
	}
	return false
}

// unread answers e to a request that carries no call the tools could
// read (a bad body), charged once as a read, so that a flood of them is
// limited too.
func unread(r *http.Request, body []byte, e *edge.Error) error {
	if c := edge.Charge(r.Context(), append([]byte(r.URL.Path+"\n"), body...), false); c != nil {
		return c
	}
	return e
}
