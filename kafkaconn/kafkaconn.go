// Package kafkaconn holds how kraftwatch connects to Kafka: TLS (with mutual TLS) and
// SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), read from KRAFTWATCH_KAFKA_* (brokers) or
// KRAFTWATCH_CONTROLLER_* (the controller listener), validated once into a Security
// that gives each of kraftwatch's two Kafka clients its connections.
//
// Each client has one job:
//
//   - github.com/segmentio/kafka-go reads __consumer_offsets (groups.Reader, through
//     Security.Dialer): fetches of an ordinary topic from its partitions' leaders, and
//     their end offsets, which kafka-go's Reader and Client do with little code.
//   - github.com/twmb/franz-go speaks the KRaft quorum protocol to the controllers
//     (observer/, through Security.FranzOpts; kmsg holds the wire types): Fetch and
//     FetchSnapshot of __cluster_metadata as a Raft observer (replica id -1),
//     DescribeQuorum and DescribeCluster, which kafka-go does not speak.
//
// No setting is mapped twice: Security loads the TLS configuration once and builds the
// SASL mechanism once, as a franz-go sasl.Mechanism; Dialer hands kafka-go the same
// *tls.Config and the same mechanism through an adapter (the two libraries' SASL
// interfaces describe the same exchange). The SASL password is read at each
// authentication, so a rotated KAFKA_SASL_PASSWORD_FILE is picked up by the next
// connection of either client.
//
// A Config is a plain value, safe to copy and share; a Security is immutable and safe
// for concurrent use.
package kafkaconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
)

// ClientID is the client.id kraftwatch gives Kafka.
const ClientID = "kraftwatch"

// Config is the security of a connection to Kafka. The env tags are relative: the
// program reads them under KRAFTWATCH_KAFKA_.
type Config struct {
	TLS              bool   `env:"TLS" envDefault:"false" desc:"connect to Kafka with TLS (implied by any other KAFKA_TLS_* setting)"`
	TLSCAFile        string `env:"TLS_CA_FILE" desc:"PEM CA bundle for Kafka's certificates; empty uses the system pool"`
	TLSCertFile      string `env:"TLS_CERT_FILE" desc:"PEM client certificate for Kafka (mutual TLS)"`
	TLSKeyFile       string `env:"TLS_KEY_FILE" desc:"PEM client key for Kafka (mutual TLS)"`
	TLSInsecure      bool   `env:"TLS_INSECURE_SKIP_VERIFY" envDefault:"false" desc:"do not verify Kafka's certificates (testing only)"`
	SASLMechanism    string `env:"SASL_MECHANISM" desc:"PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; empty disables SASL"`
	SASLUsername     string `env:"SASL_USERNAME" desc:"SASL user name"`
	SASLPassword     string `env:"SASL_PASSWORD" desc:"SASL password"`
	SASLPasswordFile string `env:"SASL_PASSWORD_FILE" desc:"file holding the SASL password (instead of KAFKA_SASL_PASSWORD)"`
}

// FieldError is a bad setting: Field is the env name relative to the Config
// (SASL_MECHANISM), so the caller can prefix it.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Validate returns one *FieldError per bad setting, joined.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	switch c.SASLMechanism {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		bad("SASL_MECHANISM", "%q is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", c.SASLMechanism)
	}
	if c.SASLMechanism != "" && c.SASLUsername == "" {
		bad("SASL_USERNAME", "required with KAFKA_SASL_MECHANISM")
	}
	if c.SASLMechanism != "" && c.SASLPassword == "" && c.SASLPasswordFile == "" {
		bad("SASL_PASSWORD", "required with KAFKA_SASL_MECHANISM (or KAFKA_SASL_PASSWORD_FILE)")
	}
	if c.SASLPassword != "" && c.SASLPasswordFile != "" {
		bad("SASL_PASSWORD_FILE", "set either it or KAFKA_SASL_PASSWORD, not both")
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		bad("TLS_CERT_FILE", "KAFKA_TLS_CERT_FILE and KAFKA_TLS_KEY_FILE go together")
	}
	// The files' contents, parsed as the connections will.
	if c.TLSCAFile != "" {
		if _, err := ReadCAFile(c.TLSCAFile); err != nil {
			bad("TLS_CA_FILE", "%v", err)
		}
	}
	if err := CheckKeyPair(c.TLSCertFile, c.TLSKeyFile); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			bad("TLS_"+fe.Field, "%s", strings.ReplaceAll(fe.Msg, "TLS_KEY_FILE", "KAFKA_TLS_KEY_FILE"))
		}
	}
	if c.SASLPasswordFile != "" {
		if p, err := c.Password(); err != nil {
			bad("SASL_PASSWORD_FILE", "%v", err)
		} else if p == "" {
			bad("SASL_PASSWORD_FILE", "%s is empty", c.SASLPasswordFile)
		}
	}
	return errors.Join(errs...)
}

// UsesTLS reports whether connections are made with TLS.
func (c Config) UsesTLS() bool {
	return c.TLS || c.TLSCAFile != "" || c.TLSCertFile != "" || c.TLSInsecure
}

// Password is SASLPassword, or the first line of SASLPasswordFile, read now (so a
// rotated file is picked up by the next connection that asks).
func (c Config) Password() (string, error) {
	if c.SASLPasswordFile == "" {
		return c.SASLPassword, nil
	}
	b, err := os.ReadFile(c.SASLPasswordFile)
	if err != nil {
		return "", fmt.Errorf("kafka SASL password: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// TLSFiles is a TLS 1.2+ configuration from PEM files: caFile (empty: the system pool)
// and a client certificate (both empty: none).
func TLSFiles(caFile, certFile, keyFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pool, err := ReadCAFile(caFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// CheckKeyPair checks a client certificate and its key: that each file set can be
// read and, when both are, that they parse and match. Its errors are *FieldErrors
// for CERT_FILE or KEY_FILE.
func CheckKeyPair(certFile, keyFile string) error {
	var errs []error
	for _, f := range []struct{ field, path string }{{"CERT_FILE", certFile}, {"KEY_FILE", keyFile}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			errs = append(errs, &FieldError{Field: f.field, Msg: err.Error()})
		}
	}
	if len(errs) == 0 && certFile != "" && keyFile != "" {
		if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
			errs = append(errs, &FieldError{Field: "CERT_FILE", Msg: "with TLS_KEY_FILE: " + err.Error()})
		}
	}
	return errors.Join(errs...)
}

// ReadCAFile reads a PEM CA bundle: an error unless it holds at least one certificate.
func ReadCAFile(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}

// SplitHosts splits a comma-separated host:port list, dropping blanks.
func SplitHosts(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
