// Package temporalclient builds the Temporal client options every binary
// shares: the frontend's address and namespace, and how to reach a secured
// cluster or Temporal Cloud (TLS, mTLS, an API key). Flags and environment
// variables use the names the Temporal CLI reads.
package temporalclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/agency/agencyheader"
	"github.com/bookingsaga/bookingsaga/payloadcodec"
)

// Config says where Temporal is and how to authenticate to it.
type Config struct {
	Address, Namespace string
	// TLS turns TLS on with the system's roots; the fields below imply it.
	TLS bool
	// CAFile verifies the server instead of the system's roots.
	CAFile string
	// CertFile and KeyFile are the client's certificate for mTLS.
	CertFile, KeyFile string
	// ServerName overrides the name the server's certificate must carry.
	ServerName string
	// APIKey authenticates to Temporal Cloud (or a cluster that takes API
	// keys); it implies TLS.
	APIKey string
	// PayloadKeysFile holds the AES-256 keys every payload is encrypted
	// with (payloadcodec); empty leaves payloads in plain text.
	PayloadKeysFile string
	// Compression is the gRPC compression of calls to Temporal:
	// CompressionNone (the default, as is empty) or CompressionGzip (the
	// SDK's own default). gzip was 6 % of a worker's profile in the soak,
	// whose workers spent a tenth more CPU with it, to shrink messages
	// whose payloads, once encrypted, do not shrink; it pays across a
	// metered link.
	Compression string
}

// The gRPC compressions a client can use.
const (
	CompressionNone = "none"
	CompressionGzip = "gzip"
)

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// FromEnv is the configuration the environment gives, with the defaults
// of a local Temporal.
func FromEnv() Config {
	return Config{Address: env("TEMPORAL_ADDRESS", "127.0.0.1:7233"), Namespace: env("TEMPORAL_NAMESPACE", "default"),
		TLS: os.Getenv("TEMPORAL_TLS") == "true", CAFile: os.Getenv("TEMPORAL_TLS_CA"), CertFile: os.Getenv("TEMPORAL_TLS_CERT"),
		KeyFile: os.Getenv("TEMPORAL_TLS_KEY"), ServerName: os.Getenv("TEMPORAL_TLS_SERVER_NAME"), APIKey: os.Getenv("TEMPORAL_API_KEY"),
		PayloadKeysFile: os.Getenv("PAYLOAD_KEYS_FILE"), Compression: env("TEMPORAL_GRPC_COMPRESSION", CompressionNone)}
}

// Register adds the flags to fs, defaulting to c's values.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Address, "temporal-address", c.Address, "Temporal frontend host:port (env TEMPORAL_ADDRESS)")
	fs.StringVar(&c.Namespace, "namespace", c.Namespace, "Temporal namespace (env TEMPORAL_NAMESPACE)")
	fs.BoolVar(&c.TLS, "temporal-tls", c.TLS, "connect to Temporal over TLS (env TEMPORAL_TLS=true); implied by the other TLS settings")
	fs.StringVar(&c.CAFile, "temporal-tls-ca", c.CAFile, "CA certificate that signed Temporal's (env TEMPORAL_TLS_CA); default: the system's roots")
	fs.StringVar(&c.CertFile, "temporal-tls-cert", c.CertFile, "client certificate for mTLS (env TEMPORAL_TLS_CERT)")
	fs.StringVar(&c.KeyFile, "temporal-tls-key", c.KeyFile, "client key for mTLS (env TEMPORAL_TLS_KEY)")
	fs.StringVar(&c.ServerName, "temporal-tls-server-name", c.ServerName, "name Temporal's certificate must carry (env TEMPORAL_TLS_SERVER_NAME)")
	fs.StringVar(&c.APIKey, "temporal-api-key", c.APIKey, "Temporal Cloud API key (env TEMPORAL_API_KEY)")
	fs.StringVar(&c.PayloadKeysFile, "payload-keys", c.PayloadKeysFile, "AES-256 keys that encrypt every Temporal payload (env PAYLOAD_KEYS_FILE); every client of one namespace needs the same file")
	fs.StringVar(&c.Compression, "temporal-compression", c.Compression, "gRPC compression of calls to Temporal: none or gzip (env TEMPORAL_GRPC_COMPRESSION)")
}

// Codec is the payload codec of PayloadKeysFile, nil without one.
func (c Config) Codec() (*payloadcodec.Codec, error) {
	if c.PayloadKeysFile == "" {
		return nil, nil
	}
	keys, err := payloadcodec.LoadKeys(c.PayloadKeysFile)
	if err != nil {
		return nil, err
	}
	return payloadcodec.New(keys), nil
}

// Validate checks the settings fit together.
func (c Config) Validate() error {
	var errs []error
	if c.Address == "" || c.Namespace == "" {
		errs = append(errs, errors.New("temporal address and namespace must not be empty"))
	}
	if c.Compression != "" && c.Compression != CompressionNone && c.Compression != CompressionGzip {
		errs = append(errs, fmt.Errorf("temporal-compression %q: want %s or %s", c.Compression, CompressionNone, CompressionGzip))
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		errs = append(errs, errors.New("temporal-tls-cert and temporal-tls-key go together"))
	}
	return errors.Join(errs...)
}

func (c Config) tlsOn() bool {
	return c.TLS || c.CAFile != "" || c.CertFile != "" || c.ServerName != "" || c.APIKey != ""
}

// Options are the client options for c; the caller adds its logger,
// metrics and data converter.
func (c Config) Options() (client.Options, error) {
	// Every client carries the agency a call acts for into what it starts,
	// and every worker (whose client this is) on into the activities.
	o := client.Options{HostPort: c.Address, Namespace: c.Namespace,
		ContextPropagators: []workflow.ContextPropagator{agencyheader.Propagator{}}}
	codec, err := c.Codec()
	if err != nil {
		return client.Options{}, err
	}
	if codec != nil {
		o.DataConverter = codec.DataConverter()
	}
	if c.Compression != CompressionGzip {
		o.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	if !c.tlsOn() {
		return o, nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return client.Options{}, fmt.Errorf("temporal tls ca: %w", err)
		}
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM(pem) {
			return client.Options{}, fmt.Errorf("temporal tls ca %s: no PEM certificate in it", c.CAFile)
		}
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return client.Options{}, fmt.Errorf("temporal tls client certificate: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	o.ConnectionOptions.TLS = t
	if c.APIKey != "" {
		o.Credentials = client.NewAPIKeyStaticCredentials(c.APIKey)
	}
	return o, nil
}
