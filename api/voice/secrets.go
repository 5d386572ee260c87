package voice

import (
	"context"
	"errors"
	"net/http"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// An agency's voice platforms sign with secrets of its own: its Retell
// account's API key, its Vapi credential. Its tool URLs
// (/v1/agencies/{agency}/tools/...) check a call against the agency's
// secrets, which its admin sets (PUT /v1/voice/secrets/{platform}); the
// deployment's URLs (/v1/tools/...) against the deployment's (Config),
// for the default agency.

// Secrets are each agency's platform secrets, for the agency ctx acts for
// (*store.Store implements it): booking.ErrNotFound when it set none.
type Secrets interface {
	PlatformSecret(ctx context.Context, platform string) (string, error)
}

// The platforms whose secrets an agency sets (booking.SignedPlatforms).
const (
	secretRetell   = "retell"
	secretVapi     = "vapi"
	secretVapiHMAC = "vapi_hmac"
)

// agencyURL reports whether r came in at an agency's tool URL.
func agencyURL(r *http.Request) bool { return r.PathValue("agency") != "" }

// secret is the secret a call to r's URL is checked against for
// platform: the agency's at its tool URLs, the deployment's otherwise;
// "" for none set.
func (t *Tools) secret(r *http.Request, platform string) (string, *edge.Error) {
	if !agencyURL(r) {
		return map[string]string{secretRetell: t.cfg.RetellKey, secretVapi: t.cfg.VapiSecret,
			secretVapiHMAC: t.cfg.VapiHMACSecret}[platform], nil
	}
	if t.cfg.Secrets == nil {
		return "", unauthorized("this API keeps no agency's platform secrets")
	}
	s, err := t.cfg.Secrets.PlatformSecret(r.Context(), platform)
	switch {
	case errors.Is(err, booking.ErrNotFound):
		return "", nil
	case err != nil:
		edge.Logger(r.Context()).Error("read platform secret", zap.Error(err))
		return "", &edge.Error{Status: http.StatusServiceUnavailable, Code: string(booking.CodeUnavailable), Retryable: true,
			Message: "the agency's platform secrets could not be read; send the call again"}
	}
	return s, nil
}

// signed reports whether a call to r's URL is checked against a secret
// of platform's (secret): only a signed call's caller ID is believed.
func (t *Tools) signed(r *http.Request, platforms ...string) bool {
	if agencyURL(r) {
		return true // its Verify refused it unless signed
	}
	for _, p := range platforms {
		if s, _ := t.secret(r, p); s != "" {
			return true
		}
	}
	return false
}

func unauthorized(msg string) *edge.Error {
	return &edge.Error{Status: http.StatusUnauthorized, Code: string(booking.CodeUnauthorized), Message: msg}
}
