// Package health is what a process says of itself to a load balancer and
// to operators: readiness, from briefly asking each dependency whether it
// answers.
package health

import (
	"context"
	"net/http"
	"time"
)

// Check is one dependency readiness asks about.
type Check struct {
	Name string
	Fn   func(context.Context) error
}

// Readiness is GET /v1/ops/readiness's answer: "ready", or "not_ready"
// with what failed. GET /readyz gives the status alone: who may reach the
// API must not learn which dependency is down, or its address and error.
// Liveness (/healthz) says only that the process answers.
type Readiness struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks,omitempty"`
	// ZoneRules is the IANA release local times are resolved with
	// (operators only); StoreZoneRules the release of the newest booking
	// the workers committed, and ZoneRulesSkew whether the two differ (a
	// rolling deploy: only local times the two read apart are refused).
	ZoneRules      string `json:"zone_rules,omitempty"`
	StoreZoneRules string `json:"store_zone_rules,omitempty"`
	ZoneRulesSkew  bool   `json:"zone_rules_skew,omitempty"`
}

// Probe asks each check, for two seconds at most, and answers readiness
// with its HTTP status: 503 when any failed.
func Probe(ctx context.Context, checks []Check) (Readiness, int) {
	out, status := Readiness{Status: "ready", Checks: map[string]string{}}, http.StatusOK
	for _, c := range checks {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := c.Fn(cctx)
		cancel()
		out.Checks[c.Name] = "ok"
		if err != nil {
			out.Checks[c.Name], out.Status, status = err.Error(), "not_ready", http.StatusServiceUnavailable
		}
	}
	return out, status
}
