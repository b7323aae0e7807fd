package kafkatest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Protocol is the Kafka security protocol (security.protocol) of an extra client
// listener; the listener is named after it.
type Protocol string

// The protocols Options.Security accepts.
const (
	SSL           Protocol = "SSL"            // TLS, no authentication
	SASLPlaintext Protocol = "SASL_PLAINTEXT" // SASL without TLS
	SASLSSL       Protocol = "SASL_SSL"       // SASL over TLS
)

func (p Protocol) tls() bool  { return p == SSL || p == SASLSSL }
func (p Protocol) sasl() bool { return p == SASLPlaintext || p == SASLSSL }

// SASLMechanisms are the mechanisms every SASL listener enables, for every user.
var SASLMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// DefaultUsers are the SASL users when Options.Users is empty.
var DefaultUsers = map[string]string{"kraftwatch": "kraftwatch-secret"}

// credential is what a SASL user name or password may hold: kafka-storage's
// --add-scram and the JAAS config would need quoting for anything else.
var credential = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

func checkSecurity(opts Options) error {
	seen := map[Protocol]bool{}
	for _, p := range opts.Security {
		if !p.tls() && !p.sasl() {
			return fmt.Errorf("kafkatest: Options.Security: %q is not SSL, SASL_PLAINTEXT or SASL_SSL", p)
		}
		if seen[p] {
			return fmt.Errorf("kafkatest: Options.Security: %s twice", p)
		}
		seen[p] = true
	}
	for name, password := range opts.Users {
		if !credential.MatchString(name) || !credential.MatchString(password) {
			return fmt.Errorf("kafkatest: Options.Users: user %q: names and passwords are limited to [A-Za-z0-9._-]+", name)
		}
	}
	return nil
}

// BootstrapFor returns the bootstrap servers of every node's listener of protocol p
// (one of Options.Security), comma-separated; "" when there is no such listener.
func (c *Cluster) BootstrapFor(p Protocol) string {
	var addrs []string
	for _, n := range c.Nodes {
		if a := n.Listeners[p]; a != "" {
			addrs = append(addrs, a)
		}
	}
	return strings.Join(addrs, ",")
}

// securityProps are the server properties of the extra client listeners.
func (n *Node) securityProps(p func(k, v string)) {
	for _, proto := range n.c.security {
		prefix := "listener.name." + strings.ToLower(string(proto)) + "."
		if proto.tls() {
			p(prefix+"ssl.keystore.type", "PEM")
			p(prefix+"ssl.keystore.location", filepath.Join(n.c.tlsDir, "server.pem"))
			p(prefix+"ssl.truststore.type", "PEM")
			p(prefix+"ssl.truststore.location", n.c.CAFile)
		}
		if proto.sasl() {
			p(prefix+"sasl.enabled.mechanisms", strings.Join(SASLMechanisms, ","))
			plain := "org.apache.kafka.common.security.plain.PlainLoginModule required"
			for _, name := range sortedKeys(n.c.Users) {
				plain += fmt.Sprintf(" user_%s=%q", name, n.c.Users[name])
			}
			p(prefix+"plain.sasl.jaas.config", plain+";")
			for _, m := range SASLMechanisms[1:] {
				p(prefix+strings.ToLower(m)+".sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required;")
			}
		}
	}
}

// scramArgs are kafka-storage format's --add-scram arguments creating every user's
// SCRAM-SHA-256 and SCRAM-SHA-512 credentials in the bootstrap metadata.
func (c *Cluster) scramArgs() []string {
	if !slices.ContainsFunc(c.security, Protocol.sasl) {
		return nil
	}
	var args []string
	for _, name := range sortedKeys(c.Users) {
		for _, m := range SASLMechanisms[1:] {
			args = append(args, "--add-scram", fmt.Sprintf("%s=[name=%s,password=%s]", m, name, c.Users[name]))
		}
	}
	return args
}

// writeTLS generates a CA and a server certificate for 127.0.0.1, ::1 and localhost,
// valid for a day, and writes dir/ca.pem (the CA certificate) and dir/server.pem (the
// server's chain and unencrypted PKCS#8 key, Kafka's PEM key store file).
func writeTLS(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kafkatest CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	server := slices.Concat(
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		caPEM,
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), caPEM, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "server.pem"), server, 0o600)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// SetSCRAMPassword sets user's SCRAM credential for mechanism (SCRAM-SHA-256 or
// SCRAM-SHA-512) with kafka-configs over the PLAINTEXT listener; connections already
// authenticated stay open. Cluster.Users keeps the passwords set at start.
func (c *Cluster) SetSCRAMPassword(ctx context.Context, mechanism, user, password string) error {
	_, err := c.Tool(ctx, c.class("org.apache.kafka.tools.ConfigCommand", "kafka.admin.ConfigCommand"),
		"--bootstrap-server", c.Bootstrap(), "--alter", "--entity-type", "users", "--entity-name", user,
		"--add-config", fmt.Sprintf("%s=[password=%s]", mechanism, password))
	return err
}
