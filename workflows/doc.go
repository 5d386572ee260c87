// Package workflows holds the booking saga: one durable Temporal workflow
// per request_key. Workflows here are deterministic; every effect runs in
// package activities.
//
// # The saga's states
//
// A booking saga moves through these states. Only the first four are the
// saga's own doing; a decided state changes again only by a cancel or a
// reschedule, or when the saga adopts the store's record of its key (the
// store decides; see adopt.go).
//
//	OFFERED ──select──▶ SELECTED ──commit──▶ COMMITTING ──▶ CONFIRMED
//	   │                   │  (hold)            │   │            │
//	   │ commit            │                    │   └──▶ CONFLICT, REJECTED, EXPIRED
//	   └──────────────▶ COMMITTING              ▼
//	                                         UNKNOWN ──lookup──▶ (what the store holds)
//	                                            │    absent: COMMITTING again, same key
//	CONFIRMED ──cancel──▶ CANCELLED
//	CONFIRMED ──reschedule confirmed──▶ RESCHEDULED
//	OFFERED, SELECTED ──intent lapses──▶ EXPIRED (recorded in the store)
//
// The transition table (transitions, below) is what setState allows; any
// other move is refused and logged. COMMITTING and UNKNOWN answer
// pending_reconciliation; CONFLICT, REJECTED, EXPIRED, CANCELLED and
// RESCHEDULED are final for the saga.
package workflows

import "slices"

// transitions lists, for each state, the states the saga may move to by
// its own steps.
var transitions = map[State][]State{
	StateOffered:    {StateSelected, StateCommitting, StateCancelled, StateExpired, StateRejected},
	StateSelected:   {StateCommitting, StateCancelled, StateExpired, StateConfirmed},
	StateCommitting: {StateSelected, StateConfirmed, StateConflict, StateRejected, StateExpired, StateCancelled, StateRescheduled, StateUnknown},
	StateUnknown:    {StateCommitting, StateSelected, StateConfirmed, StateConflict, StateRejected, StateExpired, StateCancelled, StateRescheduled},
	StateConfirmed:  {StateCancelled, StateRescheduled},
}

// canMove reports whether the saga may move from one state to another by
// its own steps.
func canMove(from, to State) bool { return slices.Contains(transitions[from], to) }
