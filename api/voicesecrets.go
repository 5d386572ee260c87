package api

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// PlatformSecrets are the agency's voice platforms' signing secrets, for
// its admin key (the store implements it): its tool URLs
// (/v1/agencies/{agency}/tools/...) check each call against them. They
// are written and never answered back.
type PlatformSecrets interface {
	PlatformsSet(ctx context.Context) ([]string, error)
	PutPlatformSecret(ctx context.Context, platform, secret string) error
	DeletePlatformSecret(ctx context.Context, platform string) error
}

// PlatformSecretBody is PUT /v1/voice/secrets/{platform}.
type PlatformSecretBody struct {
	// Secret is the platform's: Retell's account API key, a Vapi bearer
	// credential's token, or a Vapi HMAC credential's secret.
	Secret string `json:"secret"`
}

// PlatformSecretList is GET /v1/voice/secrets: which platforms have a
// secret set, never the secrets.
type PlatformSecretList struct {
	Set []string `json:"set"`
}

func (s *Server) listPlatformSecrets(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.PlatformSecrets == nil {
		return noSecrets
	}
	set, err := s.cfg.PlatformSecrets.PlatformsSet(r.Context())
	if err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, PlatformSecretList{Set: append([]string{}, set...)})
}

func (s *Server) putPlatformSecret(w http.ResponseWriter, r *http.Request) error {
	platform, e := s.platform(r)
	if e != nil {
		return e
	}
	var body PlatformSecretBody
	if e := edge.Decode(r.Body, s.set.MaxBody, &body); e != nil {
		return e
	}
	if n := len(body.Secret); n < 16 || n > 512 || strings.TrimSpace(body.Secret) != body.Secret {
		return edge.BadRequest(booking.CodeInvalidRequest, "secret must be 16 to 512 bytes without leading or trailing spaces, got %d bytes", n)
	}
	if err := s.cfg.PlatformSecrets.PutPlatformSecret(r.Context(), platform, body.Secret); err != nil {
		return err
	}
	return s.listPlatformSecrets(w, r)
}

func (s *Server) deletePlatformSecret(w http.ResponseWriter, r *http.Request) error {
	platform, e := s.platform(r)
	if e != nil {
		return e
	}
	if err := s.cfg.PlatformSecrets.DeletePlatformSecret(r.Context(), platform); err != nil {
		return err
	}
	return s.listPlatformSecrets(w, r)
}

// platform is the path's platform, one of booking.SignedPlatforms.
func (s *Server) platform(r *http.Request) (string, *edge.Error) {
	if s.cfg.PlatformSecrets == nil {
		return "", noSecrets
	}
	p := r.PathValue("platform")
	if !slices.Contains(booking.SignedPlatforms, p) {
		return "", &edge.Error{Status: http.StatusNotFound, Code: string(booking.CodeNotFound),
			Message: "no platform " + p + "; platforms are " + strings.Join(booking.SignedPlatforms, ", ")}
	}
	return p, nil
}

var noSecrets = &edge.Error{Status: http.StatusNotImplemented, Code: string(booking.CodeUnavailable),
	Message: "this API has no store connection for platform secrets"}
