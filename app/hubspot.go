package app

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/hubspot"
	"github.com/bookingsaga/bookingsaga/internal/retry"
)

// HubSpot is the HubSpot account the CRM mirror writes meetings to
// (-crm hubspot): a private app's access token, from a file or the
// environment, never a flag's value, which ps would show.
type HubSpot struct {
	// TokenFile holds the token; without it, HUBSPOT_ACCESS_TOKEN does.
	TokenFile string
	// URL is HubSpot's API root, or a fake's.
	URL string
	// PerTenSeconds is the app's ten-second limit (100 on Free and
	// Starter, 190 on Professional and Enterprise).
	PerTenSeconds int
}

func (h *HubSpot) register(fs *flag.FlagSet) {
	fs.StringVar(&h.TokenFile, "hubspot-token-file", h.TokenFile, "file holding the HubSpot private app's access token; empty reads the env HUBSPOT_ACCESS_TOKEN")
	fs.StringVar(&h.URL, "hubspot-url", h.URL, "HubSpot API root (env HUBSPOT_URL)")
	fs.IntVar(&h.PerTenSeconds, "hubspot-per-ten-seconds", h.PerTenSeconds, "the app's calls per rolling ten seconds, shared by this process's activities")
}

func hubspotFromEnv() HubSpot {
	url := os.Getenv("HUBSPOT_URL")
	if url == "" {
		url = hubspot.DefaultBaseURL
	}
	return HubSpot{TokenFile: os.Getenv("HUBSPOT_TOKEN_FILE"), URL: url, PerTenSeconds: 100}
}

func (h HubSpot) validate() error {
	if h.PerTenSeconds <= 0 {
		return fmt.Errorf("hubspot-per-ten-seconds must be positive, got %d", h.PerTenSeconds)
	}
	return nil
}

// configured reports whether a token is given, so that properties may
// name HubSpot beside the default CRM.
func (h HubSpot) configured() bool {
	return h.TokenFile != "" || os.Getenv("HUBSPOT_ACCESS_TOKEN") != ""
}

// token reads the access token: the file's, else the environment's.
func (h HubSpot) token() (string, error) {
	if h.TokenFile == "" {
		if t := os.Getenv("HUBSPOT_ACCESS_TOKEN"); t != "" {
			return t, nil
		}
		return "", errors.New("-crm hubspot needs -hubspot-token-file or HUBSPOT_ACCESS_TOKEN")
	}
	data, err := os.ReadFile(h.TokenFile)
	if err != nil {
		return "", fmt.Errorf("hubspot token: %w", err)
	}
	return strings.TrimSpace(string(data)), nil
}

// config is the client's, its token read.
func (h HubSpot) config(timeout time.Duration) (*hubspot.Config, error) {
	token, err := h.token()
	if err != nil {
		return nil, err
	}
	return &hubspot.Config{BaseURL: h.URL, Token: token, Timeout: timeout, Retry: retry.Default(), PerTenSeconds: h.PerTenSeconds}, nil
}
