// Package app wires bookingsaga's worker: the store, the calendar and CRM
// mirrors, the Temporal client and worker, metrics, health, the
// reconciliation schedule, and (-dev) the embedded stack with the agent
// API. cmd-style packages (worker/, starter/) only parse flags and call it.
// Its tests are the system tests: a real PostgreSQL and an in-process
// Temporal server.
package app
