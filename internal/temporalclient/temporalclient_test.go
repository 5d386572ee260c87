package temporalclient

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/common/rpc/encryption"
	"go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"

	"github.com/bookingsaga/bookingsaga/agency"
)

// pki is a CA and the certificates it signed, as files.
type pki struct {
	dir                           string
	ca                            *x509.Certificate
	caKey                         *ecdsa.PrivateKey
	server, client                tls.Certificate
	caFile, clientCert, clientKey string
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir()}
	var err error
	p.caKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bookingsaga test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &p.caKey.PublicKey, p.caKey)
	require.NoError(t, err)
	p.ca, err = x509.ParseCertificate(der)
	require.NoError(t, err)
	p.caFile = p.write(t, "ca.pem", "CERTIFICATE", der)
	var certFile, keyFile string
	p.server, _, _ = p.issue(t, "server", x509.ExtKeyUsageServerAuth)
	p.client, certFile, keyFile = p.issue(t, "client", x509.ExtKeyUsageClientAuth)
	p.clientCert, p.clientKey = certFile, keyFile
	return p
}

func (p *pki) write(t *testing.T, name, kind string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
	return path
}

func (p *pki) issue(t *testing.T, name string, usage x509.ExtKeyUsage) (tls.Certificate, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage},
		KeyUsage: x509.KeyUsageDigitalSignature, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile := p.write(t, name+".pem", "CERTIFICATE", der), p.write(t, name+"-key.pem", "EC PRIVATE KEY", keyDER)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	require.NoError(t, err)
	return cert, certFile, keyFile
}

// mtls is the server's side: the frontend requires a client certificate
// signed by the CA; the server's own services talk in the clear.
type mtls struct {
	encryption.TLSConfigProvider
	p *pki
}

func (m mtls) pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(m.p.ca)
	return pool
}

func (m mtls) GetFrontendServerConfig() (*tls.Config, error) {
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{m.p.server},
		ClientCAs: m.pool(), ClientAuth: tls.RequireAndVerifyClientCert}, nil
}

func (m mtls) GetFrontendClientConfig() (*tls.Config, error) {
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: m.pool(), Certificates: []tls.Certificate{m.p.client}, ServerName: "127.0.0.1"}, nil
}

func (mtls) GetInternodeServerConfig() (*tls.Config, error) { return nil, nil }
func (mtls) GetInternodeClientConfig() (*tls.Config, error) { return nil, nil }
func (mtls) GetRemoteClusterClientConfig(string) (*tls.Config, error) {
	return nil, nil
}

// hello answers from an activity, which names the agency it acts for.
func hello(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var from string
	err := workflow.ExecuteActivity(ctx, helloFrom).Get(ctx, &from)
	return "hello over mTLS from " + from, err
}

func helloFrom(ctx context.Context) (string, error) { return agency.From(ctx).ID, nil }

// TestAWorkerReachesTemporalOverMutualTLS: with the CA, a client
// certificate and key, a client and a worker made from Config reach a
// Temporal frontend that requires mTLS, and run a workflow, whose activity
// acts for the agency the start was made for; without the certificate,
// or in the clear, they do not get in.
func TestAWorkerReachesTemporalOverMutualTLS(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	ts := temporaltest.NewServer(temporaltest.WithT(t), temporaltest.WithBaseServerOptions(temporal.WithTLSConfigFactory(mtls{p: p})))
	cfg := Config{Address: ts.GetFrontendHostPort(), Namespace: ts.GetDefaultNamespace(),
		CAFile: p.caFile, CertFile: p.clientCert, KeyFile: p.clientKey, ServerName: "127.0.0.1"}
	require.NoError(t, cfg.Validate())
	opts, err := cfg.Options()
	require.NoError(t, err)
	c, err := client.Dial(opts)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	w := worker.New(c, "tls-test", worker.Options{})
	w.RegisterWorkflow(hello)
	w.RegisterActivity(helloFrom)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(agency.With(ctx, agency.Agency{No: 2, ID: "lyon"}),
		client.StartWorkflowOptions{TaskQueue: "tls-test"}, hello)
	require.NoError(t, err)
	var got string
	require.NoError(t, run.Get(ctx, &got))
	require.Equal(t, "hello over mTLS from lyon", got)

	for name, bad := range map[string]Config{
		"no client certificate": {Address: cfg.Address, Namespace: cfg.Namespace, CAFile: p.caFile, ServerName: "127.0.0.1"},
		"in the clear":          {Address: cfg.Address, Namespace: cfg.Namespace},
	} {
		opts, err := bad.Options()
		require.NoError(t, err)
		opts.ConnectionOptions.GetSystemInfoTimeout = 2 * time.Second
		c, err := client.Dial(opts)
		if err == nil {
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			c.Close()
		}
		require.Error(t, err, name)
	}
}

func TestSettingsThatDoNotFitAreRefused(t *testing.T) {
	t.Parallel()
	require.Error(t, Config{Address: "a:1", Namespace: "n", CertFile: "c.pem"}.Validate(), "a certificate without its key")
	require.Error(t, Config{Namespace: "n"}.Validate())
	_, err := Config{Address: "a:1", Namespace: "n", CAFile: "/no/such/ca.pem"}.Options()
	require.ErrorContains(t, err, "temporal tls ca")
	o, err := Config{Address: "a:1", Namespace: "n", APIKey: "k"}.Options()
	require.NoError(t, err)
	require.NotNil(t, o.ConnectionOptions.TLS, "an API key goes over TLS")
	require.NotNil(t, o.Credentials)
	require.ErrorContains(t, Config{Address: "a:1", Namespace: "n", Compression: "zstd"}.Validate(), `temporal-compression "zstd"`)
}

// Calls to Temporal go uncompressed unless gzip is asked for: the SDK's
// default compresses every call, which cost a worker a tenth of its CPU.
func TestCompressionIsOffUnlessAskedFor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		compression string
		want        client.GrpcCompression
	}{{"", &client.GrpcCompressionNone{}}, {CompressionNone, &client.GrpcCompressionNone{}}, {CompressionGzip, nil}} {
		cfg := Config{Address: "a:1", Namespace: "n", Compression: c.compression}
		require.NoError(t, cfg.Validate())
		o, err := cfg.Options()
		require.NoError(t, err)
		require.Equal(t, c.want, o.ConnectionOptions.GrpcCompression, "compression %q", c.compression)
	}
}
