package edge

import (
	_ "embed"
	"github.com/bookingsaga/bookingsaga/internal/health"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"go.uber.org/zap"
	"net/http"
)

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	return WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz asks each dependency, briefly, whether it answers: a load
// balancer or compose health check stops sending calls to an API whose
// Temporal or store is gone, which liveness alone would not. What failed
// goes to the log and to the ops route.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	out, status := health.Probe(r.Context(), s.cfg.Ready)
	for name, got := range out.Checks {
		if got != "ok" {
			logger(r).Warn("not ready", zap.String("check", name), zap.String("error", got))
		}
	}
	return WriteJSON(w, status, health.Readiness{Status: out.Status})
}

// opsReadiness is readiness with each check's answer, for operators: a
// report, so 200 either way (the probe is /readyz).
func (s *Server) opsReadiness(w http.ResponseWriter, r *http.Request) error {
	out, _ := health.Probe(r.Context(), s.cfg.Ready)
	out.ZoneRules = localtime.Version()
	if s.cfg.StoreZoneRules != nil {
		if v, err := s.cfg.StoreZoneRules(r.Context()); err == nil && v != "" {
			out.StoreZoneRules, out.ZoneRulesSkew = v, v != out.ZoneRules
		}
	}
	return WriteJSON(w, http.StatusOK, out)
}

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI is the API's OpenAPI document, served at /openapi.json.
func OpenAPI() []byte { return openAPIDoc }

func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(openAPIDoc)
	return err
}
