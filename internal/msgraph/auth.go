package msgraph

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // x5t is defined as the certificate's SHA-1 thumbprint
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// The app authenticates with the client credentials grant of the Microsoft
// identity platform: a client secret, or a client assertion (a JWT signed
// with the certificate's key, RFC 7523) that is made fresh for each token.

// tokenSource returns a cached source of app-only tokens for Graph.
func tokenSource(cfg Config) (oauth2.TokenSource, error) {
	login := cfg.Login
	if login == "" {
		login = DefaultLogin
	}
	tokenURL := strings.TrimSuffix(login, "/") + "/" + url.PathEscape(cfg.TenantID) + "/oauth2/v2.0/token"
	// The token request is bounded like any call; the oauth2 package
	// takes its client from the context it is given.
	client := &http.Client{Timeout: cfg.CallTimeout}
	cc := clientcredentials.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: tokenURL,
		Scopes: []string{scope}, AuthStyle: oauth2.AuthStyleInParams}
	if cfg.CertificateFile == "" {
		return cc.TokenSource(context.WithValue(context.Background(), oauth2.HTTPClient, client)), nil
	}
	signer, err := loadCertificate(cfg.CertificateFile)
	if err != nil {
		return nil, err
	}
	return oauth2.ReuseTokenSource(nil, &assertionSource{client: client, cc: cc, signer: signer}), nil
}

// assertionSource asks for a token with a new signed assertion each time.
type assertionSource struct {
	client *http.Client
	cc     clientcredentials.Config
	signer *certSigner
}

func (s *assertionSource) Token() (*oauth2.Token, error) {
	jwt, err := s.signer.assertion(s.cc.ClientID, s.cc.TokenURL, time.Now())
	if err != nil {
		return nil, err
	}
	cc := s.cc
	cc.EndpointParams = url.Values{
		"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
		"client_assertion":      {jwt},
	}
	return cc.Token(context.WithValue(context.Background(), oauth2.HTTPClient, s.client))
}

// certSigner signs client assertions with a certificate's RSA key.
type certSigner struct {
	key        *rsa.PrivateKey
	thumbprint string // x5t: base64url of the certificate's SHA-1
}

// loadCertificate reads a PEM file holding a certificate and its RSA key,
// as Entra ID takes certificates (upload the certificate, keep the key).
func loadCertificate(path string) (*certSigner, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("msgraph: certificate: %w", err)
	}
	var cert *x509.Certificate
	var key *rsa.PrivateKey
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		switch block.Type {
		case "CERTIFICATE":
			if cert, err = x509.ParseCertificate(block.Bytes); err != nil {
				return nil, fmt.Errorf("msgraph: certificate %s: %w", path, err)
			}
		case "PRIVATE KEY", "RSA PRIVATE KEY":
			if key, err = parseRSAKey(block); err != nil {
				return nil, fmt.Errorf("msgraph: certificate %s: %w", path, err)
			}
		}
	}
	if cert == nil || key == nil {
		return nil, fmt.Errorf("msgraph: certificate %s: want a CERTIFICATE and its RSA PRIVATE KEY in PEM", path)
	}
	if pub, ok := cert.PublicKey.(*rsa.PublicKey); !ok || !pub.Equal(&key.PublicKey) {
		return nil, fmt.Errorf("msgraph: certificate %s: the private key is not the certificate's", path)
	}
	sum := sha1.Sum(cert.Raw) //nolint:gosec // see the import
	return &certSigner{key: key, thumbprint: base64.RawURLEncoding.EncodeToString(sum[:])}, nil
}

func parseRSAKey(block *pem.Block) (*rsa.PrivateKey, error) {
	if block.Type == "RSA PRIVATE KEY" {
		return x509.ParsePKCS1PrivateKey(block.Bytes)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("the private key is not RSA")
	}
	return rk, nil
}

// assertion is a JWT for the token endpoint aud, from the app clientID,
// valid for ten minutes.
func (s *certSigner) assertion(clientID, aud string, now time.Time) (string, error) {
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", err
	}
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "x5t": s.thumbprint})
	claims, _ := json.Marshal(map[string]any{"aud": aud, "iss": clientID, "sub": clientID, "jti": hex.EncodeToString(jti[:]),
		"nbf": now.Unix(), "iat": now.Unix(), "exp": now.Add(10 * time.Minute).Unix()})
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, digest[:])
	if err != nil {
		return "", fmt.Errorf("msgraph: sign assertion: %w", err)
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// tokenError is a token that could not be had; transient when the
// identity platform or the network failed rather than refused.
type tokenError struct {
	err       error
	transient bool
}

func (e *tokenError) Error() string { return "msgraph: token: " + e.err.Error() }
func (e *tokenError) Unwrap() error { return e.err }

// bearer adds the app's token to each Graph request.
type bearer struct {
	source oauth2.TokenSource
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := b.source.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		transient := !errors.As(err, &re) || re.Response == nil ||
			re.Response.StatusCode >= 500 || re.Response.StatusCode == http.StatusTooManyRequests
		return nil, &tokenError{err: err, transient: transient}
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return http.DefaultTransport.RoundTrip(r)
}
