package kafkaconn

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestPrincipalAndFranzOpts(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kraftwatch", Organization: []string{"ops"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600)

	for _, tc := range []struct {
		name      string
		cfg       Config
		principal string
		opts      int
		fails     bool
	}{
		{"plaintext", Config{}, "User:ANONYMOUS", 0, false},
		{"mutual TLS", Config{TLSCertFile: certFile, TLSKeyFile: keyFile}, "User:CN=kraftwatch,O=ops", 1, false},
		{"SASL over TLS", Config{TLS: true, SASLMechanism: "SCRAM-SHA-512", SASLUsername: "alice", SASLPassword: "pw"}, "User:alice", 2, false},
		{"PLAIN", Config{SASLMechanism: "PLAIN", SASLUsername: "bob", SASLPassword: "pw"}, "User:bob", 1, false},
		{"unreadable password file", Config{SASLMechanism: "PLAIN", SASLUsername: "bob", SASLPasswordFile: filepath.Join(dir, "nope")}, "User:bob", 0, true},
		{"CA file that holds no certificate", Config{TLSCAFile: keyFile}, "User:ANONYMOUS", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.cfg.Principal(); got != tc.principal {
				t.Errorf("Principal = %q, want %q", got, tc.principal)
			}
			opts, err := tc.cfg.FranzOpts()
			if (err != nil) != tc.fails || (err == nil && len(opts) != tc.opts) {
				t.Errorf("FranzOpts = %d options, %v; want %d, failure %v", len(opts), err, tc.opts, tc.fails)
			}
		})
	}
}
