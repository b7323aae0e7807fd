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
// listener; a broker's listener is named after it, a controller's CONTROLLER_<it>.
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

// ClientCN is the common name of Cluster.ClientCertFile; on the mutual TLS
// controller listener its principal is User:ClientCN.
const ClientCN = "kraftwatch"

func checkSecurity(opts Options) error {
	for field, protos := range map[string][]Protocol{"Security": opts.Security, "ControllerSecurity": opts.ControllerSecurity} {
		seen := map[Protocol]bool{}
		for _, p := range protos {
			if !p.tls() && !p.sasl() {
				return fmt.Errorf("kafkatest: Options.%s: %q is not SSL, SASL_PLAINTEXT or SASL_SSL", field, p)
			}
			if seen[p] {
				return fmt.Errorf("kafkatest: Options.%s: %s twice", field, p)
			}
			seen[p] = true
		}
	}
	if opts.Controllers < 0 {
		return fmt.Errorf("kafkatest: Options.Controllers: %d", opts.Controllers)
	}
	for _, u := range opts.SuperUsers {
		if !strings.HasPrefix(u, "User:") || strings.ContainsAny(u, ";, ") {
			return fmt.Errorf("kafkatest: Options.SuperUsers: %q is not User:<name>", u)
		}
	}
	for name, password := range opts.Users {
		if !credential.MatchString(name) || !credential.MatchString(password) {
			return fmt.Errorf("kafkatest: Options.Users: user %q: names and passwords are limited to [A-Za-z0-9._-]+", name)
		}
	}
	return nil
}

// BootstrapFor returns the bootstrap servers of every broker's listener of protocol p
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

// ControllerBootstrapFor returns every controller's listener of protocol p (one of
// Options.ControllerSecurity), comma-separated; "" when there is no such listener.
func (c *Cluster) ControllerBootstrapFor(p Protocol) string {
	var addrs []string
	for _, n := range c.Nodes {
		if a := n.ControllerListeners[p]; a != "" {
			addrs = append(addrs, a)
		}
	}
	return strings.Join(addrs, ",")
}

// controllerListener is the name of a controller's listener of protocol p.
func controllerListener(p Protocol) string { return "CONTROLLER_" + string(p) }

// securityProps are the server properties of the extra client and controller
// listeners and of the authorizer.
func (n *Node) securityProps(p func(k, v string)) {
	if n.Broker {
		for _, proto := range n.c.security {
			n.listenerProps(p, string(proto), proto, false)
		}
	}
	if !n.Controller {
		return
	}
	for _, proto := range n.c.ctrlSecurity {
		n.listenerProps(p, controllerListener(proto), proto, proto == SSL)
	}
	if slices.Contains(n.c.ctrlSecurity, SSL) {
		// The principal of a client certificate is its CN alone: User:kraftwatch.
		p("ssl.principal.mapping.rules", "RULE:^CN=(.*)$/$1/,DEFAULT")
	}
	if n.c.authorizer {
		p("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
		p("super.users", strings.Join(append([]string{"User:ANONYMOUS"}, n.c.superUsers...), ";"))
	}
}

// listenerProps are the TLS and SASL properties of listener name of protocol proto;
// clientAuth requires a client certificate.
func (n *Node) listenerProps(p func(k, v string), name string, proto Protocol, clientAuth bool) {
	prefix := "listener.name." + strings.ToLower(name) + "."
	if proto.tls() {
		p(prefix+"ssl.keystore.type", "PEM")
		p(prefix+"ssl.keystore.location", filepath.Join(n.c.tlsDir, "server.pem"))
		p(prefix+"ssl.truststore.type", "PEM")
		p(prefix+"ssl.truststore.location", n.c.CAFile)
		if clientAuth {
			p(prefix+"ssl.client.auth", "required")
		}
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

// scramArgs are kafka-storage format's --add-scram arguments creating every user's
// SCRAM-SHA-256 and SCRAM-SHA-512 credentials in the bootstrap metadata.
func (c *Cluster) scramArgs() []string {
	if len(c.Users) == 0 {
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
// server's chain and unencrypted PKCS#8 key, Kafka's PEM key store file); and a client
// certificate with CN ClientCN: dir/client-cert.pem (its chain) and
// dir/client-key.pem (its PKCS#8 key).
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
	clientKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	client := &x509.Certificate{
		SerialNumber: big.NewInt(3),
		Subject:      pkix.Name{CommonName: ClientCN},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	clientDER, err := x509.CreateCertificate(rand.Reader, client, caCert, &clientKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	clientKeyDER, err := x509.MarshalPKCS8PrivateKey(clientKey)
	if err != nil {
		return err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	server := slices.Concat(
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		caPEM,
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	files := []struct {
		name string
		data []byte
		perm os.FileMode
	}{
		{"ca.pem", caPEM, 0o644},
		{"server.pem", server, 0o600},
		{"client-cert.pem", slices.Concat(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: clientDER}), caPEM), 0o644},
		{"client-key.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: clientKeyDER}), 0o600},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, f.perm); err != nil {
			return err
		}
	}
	return nil
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
