package msgraph

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// The app authenticates with the client credentials grant of the Microsoft
// identity platform: a client secret, or a client assertion (a JWT signed
// with the certificate's key, RFC 7523) that is made fresh for each token.

// tokenSource returns the app's tokens for Graph, each kept until it
// expires or Graph stops accepting it.
func tokenSource(cfg Config) (*tokenCache, error) {
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
		return &tokenCache{fetch: func() (*oauth2.Token, error) {
			return cc.Token(context.WithValue(context.Background(), oauth2.HTTPClient, client))
		}}, nil
	}
	signer, err := loadCertificate(cfg.CertificateFile)
	if err != nil {
		return nil, err
	}
	return &tokenCache{fetch: (&assertionSource{client: client, cc: cc, signer: signer}).Token}, nil
}

// tokenCache holds the current token. It differs from the oauth2
// package's reuse in two ways: a token Graph answers 401 to (revoked, or
// expired early) can be dropped before its expiry, and a caller waits for
// a token no longer than its own context. One fetch runs at a time, on
// its own (bounded by CallTimeout), and every caller that needs a token
// meanwhile waits for that one: a slow or black-holed login endpoint
// delays each call by at most its deadline, not by a queue of fetches.
type tokenCache struct {
	fetch func() (*oauth2.Token, error)

	mu       sync.Mutex
	tok      *oauth2.Token
	inflight *tokenFetch
}

// tokenFetch is one fetch that callers wait on.
type tokenFetch struct {
	done chan struct{}
	tok  *oauth2.Token
	err  error
}

func (c *tokenCache) Token(ctx context.Context) (*oauth2.Token, error) {
	c.mu.Lock()
	if c.tok.Valid() {
		tok := c.tok
		c.mu.Unlock()
		return tok, nil
	}
	f := c.inflight
	if f == nil {
		f = &tokenFetch{done: make(chan struct{})}
		c.inflight = f
		go c.run(f)
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.tok, f.err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a token: %w", ctx.Err())
	}
}

func (c *tokenCache) run(f *tokenFetch) {
	f.tok, f.err = c.fetch()
	c.mu.Lock()
	if f.err == nil {
		c.tok = f.tok
	}
	c.inflight = nil
	c.mu.Unlock()
	close(f.done)
}

// drop forgets the token if it is still the one given, so that callers
// racing on one 401 fetch a single new token.
func (c *tokenCache) drop(used string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tok != nil && c.tok.AccessToken == used {
		c.tok = nil
	}
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
	thumbprint string // x5t#S256: base64url of the certificate's SHA-256
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
	sum := sha256.Sum256(cert.Raw)
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
// valid for ten minutes: PS256 with the certificate's SHA-256 thumbprint
// (x5t#S256), as Entra ID's certificate credentials page asks today.
func (s *certSigner) assertion(clientID, aud string, now time.Time) (string, error) {
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", err
	}
	header, _ := json.Marshal(map[string]string{"alg": "PS256", "typ": "JWT", "x5t#S256": s.thumbprint})
	claims, _ := json.Marshal(map[string]any{"aud": aud, "iss": clientID, "sub": clientID, "jti": hex.EncodeToString(jti[:]),
		"nbf": now.Unix(), "iat": now.Unix(), "exp": now.Add(10 * time.Minute).Unix()})
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPSS(rand.Reader, s.key, crypto.SHA256, digest[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
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

// bearer adds the app's token to each Graph request. A 401 drops the
// token and sends the request once more with a new one.
type bearer struct {
	tokens *tokenCache
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	res, used, err := b.send(req)
	if err != nil || res.StatusCode != http.StatusUnauthorized || (req.Body != nil && req.GetBody == nil) {
		return res, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16))
	_ = res.Body.Close()
	b.tokens.drop(used)
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		if again.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	res, _, err = b.send(again)
	return res, err
}

func (b *bearer) send(req *http.Request) (*http.Response, string, error) {
	tok, err := b.tokens.Token(req.Context())
	if err != nil {
		var re *oauth2.RetrieveError
		transient := !errors.As(err, &re) || re.Response == nil ||
			re.Response.StatusCode >= 500 || re.Response.StatusCode == http.StatusTooManyRequests
		return nil, "", &tokenError{err: err, transient: transient}
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	res, err := http.DefaultTransport.RoundTrip(r)
	return res, tok.AccessToken, err
}
