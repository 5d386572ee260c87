// Package systemtest holds the system tests: every process as app
// assembles it, against a real PostgreSQL (a throwaway cluster per test
// binary, a database per test) and an in-process Temporal server, with the
// calendar, Microsoft 365 and CRM fakes. One file per subject: the saga
// (saga_test.go, truth_test.go), the agent edge (api_test.go,
// voice_test.go, mcp_test.go, pending_test.go), reconciliation and lost
// stores (reconcile_test.go, lost*_test.go), the dev stack end to end
// (e2e_test.go), releases (version_test.go), and the benchmarks.
package systemtest
