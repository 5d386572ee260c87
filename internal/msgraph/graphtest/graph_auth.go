package graphtest

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
)

// tokenLifetime is what the identity platform gives an app-only token.
const tokenLifetime = time.Hour

// writeOAuthError writes the token endpoint's error, the OAuth 2.0 shape.
func writeOAuthError(w http.ResponseWriter, status int, code, message string) {
	fakeserver.WriteJSON(w, status, map[string]string{"error": code, "error_description": message})
}

func oauthErr(status int, code, message string) error {
	return &fakeserver.APIError{Status: status, Code: code, Message: message}
}

// token serves POST /{tenant}/oauth2/v2.0/token for the client
// credentials grant, with a client secret or a client assertion.
func (g *Graph) token(r *http.Request) (int, any, error) {
	if err := r.ParseForm(); err != nil {
		return 0, nil, oauthErr(http.StatusBadRequest, "invalid_request", "AADSTS900144: The request body must be form-encoded.")
	}
	f := r.PostForm
	switch {
	case r.PathValue("tenant") != g.app.TenantID:
		return 0, nil, oauthErr(http.StatusBadRequest, "invalid_tenant", "AADSTS90002: Tenant '"+r.PathValue("tenant")+"' not found.")
	case f.Get("grant_type") != "client_credentials":
		return 0, nil, oauthErr(http.StatusBadRequest, "unsupported_grant_type", "AADSTS70003: The app requested an unsupported grant type.")
	case f.Get("client_id") != g.app.ClientID:
		return 0, nil, oauthErr(http.StatusBadRequest, "unauthorized_client", "AADSTS700016: Application with identifier '"+f.Get("client_id")+"' was not found in the directory.")
	case f.Get("scope") != "https://graph.microsoft.com/.default":
		return 0, nil, oauthErr(http.StatusBadRequest, "invalid_scope", "AADSTS1002012: The provided value for scope is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier.")
	}
	if err := g.proven(r, f.Get("client_secret"), f.Get("client_assertion_type"), f.Get("client_assertion")); err != nil {
		return 0, nil, err
	}
	tok := "fake-" + newGraphID()
	g.tokens[tok] = time.Now().Add(tokenLifetime)
	return http.StatusOK, map[string]any{"token_type": "Bearer", "expires_in": int(tokenLifetime.Seconds()),
		"ext_expires_in": int(tokenLifetime.Seconds()), "access_token": tok}, nil
}

// proven checks the app's credential: its secret, or an assertion signed
// with its certificate's key for this token endpoint.
func (g *Graph) proven(r *http.Request, secret, assertionType, assertion string) error {
	invalid := oauthErr(http.StatusUnauthorized, "invalid_client", "AADSTS7000215: Invalid client secret provided.")
	if secret != "" {
		if g.app.ClientSecret == "" || secret != g.app.ClientSecret {
			return invalid
		}
		return nil
	}
	if assertionType != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || g.app.Certificate == nil {
		return oauthErr(http.StatusUnauthorized, "invalid_client", "AADSTS7000218: The request body must contain the following parameter: 'client_assertion' or 'client_secret'.")
	}
	aud := "http://" + r.Host + r.URL.Path
	if err := g.verifyAssertion(assertion, aud); err != "" {
		return oauthErr(http.StatusUnauthorized, "invalid_client", "AADSTS700027: Client assertion failed signature validation or its claims are wrong: "+err)
	}
	return nil
}

// verifyAssertion checks a client assertion as Entra ID takes them: PS256
// with x5t#S256 (the certificate's SHA-256 thumbprint), or the older RS256
// with x5t (SHA-1); its signature, audience, issuer, subject and times.
func (g *Graph) verifyAssertion(jwt, aud string) string {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return "not a JWT"
	}
	var header struct {
		Alg     string `json:"alg"`
		X5t     string `json:"x5t"`
		X5tS256 string `json:"x5t#S256"`
	}
	var claims struct {
		Aud, Iss, Sub string
		Exp, Nbf      int64
	}
	if decodePart(parts[0], &header) != nil || decodePart(parts[1], &claims) != nil {
		return "undecodable"
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	pub, ok := g.app.Certificate.PublicKey.(*rsa.PublicKey)
	if err != nil || !ok {
		return "unknown key"
	}
	sha1sum, sha256sum := sha1.Sum(g.app.Certificate.Raw), sha256.Sum256(g.app.Certificate.Raw) //nolint:gosec // x5t is SHA-1 by definition
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch {
	case header.Alg == "PS256" && header.X5tS256 == base64.RawURLEncoding.EncodeToString(sha256sum[:]):
		err = rsa.VerifyPSS(pub, crypto.SHA256, digest[:], sig, nil)
	case header.Alg == "RS256" && header.X5t == base64.RawURLEncoding.EncodeToString(sha1sum[:]):
		err = rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig)
	default:
		return "unknown key or algorithm"
	}
	if err != nil {
		return "bad signature"
	}
	now := time.Now().Unix()
	switch {
	case claims.Aud != aud:
		return "aud is " + claims.Aud + ", want " + aud
	case claims.Iss != g.app.ClientID || claims.Sub != g.app.ClientID:
		return "iss and sub must be the client id"
	case claims.Exp <= now || claims.Nbf > now+60:
		return "expired or not yet valid"
	}
	return ""
}

func decodePart(part string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// authorized checks the bearer token of a Graph call.
func (g *Graph) authorized(r *http.Request) error {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if exp, known := g.tokens[tok]; !ok || !known || time.Now().After(exp) {
		return graphErr(http.StatusUnauthorized, "InvalidAuthenticationToken", "Access token is empty or invalid.")
	}
	return nil
}
