package kafkaconn

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xscram "github.com/xdg-go/scram"
)

func TestSecurity(t *testing.T) {
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
		opts      int  // franz-go options
		tls, sasl bool // of the kafka-go dialer
		fails     bool
	}{
		{"plaintext", Config{}, "User:ANONYMOUS", 0, false, false, false},
		{"mutual TLS", Config{TLSCertFile: certFile, TLSKeyFile: keyFile}, "User:CN=kraftwatch,O=ops", 1, true, false, false},
		{"SASL over TLS", Config{TLS: true, SASLMechanism: "SCRAM-SHA-512", SASLUsername: "alice", SASLPassword: "pw"}, "User:alice", 2, true, true, false},
		{"PLAIN", Config{SASLMechanism: "PLAIN", SASLUsername: "bob", SASLPassword: "pw"}, "User:bob", 1, false, true, false},
		{"unreadable password file", Config{SASLMechanism: "PLAIN", SASLUsername: "bob", SASLPasswordFile: filepath.Join(dir, "nope")}, "", 0, false, false, true},
		{"CA file that holds no certificate", Config{TLSCAFile: keyFile}, "", 0, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sec, err := tc.cfg.Security()
			if (err != nil) != tc.fails {
				t.Fatalf("Security: %v, want failure %v", err, tc.fails)
			}
			if err != nil {
				return
			}
			if got := sec.Principal(); got != tc.principal {
				t.Errorf("Principal = %q, want %q", got, tc.principal)
			}
			if opts := sec.FranzOpts(); len(opts) != tc.opts {
				t.Errorf("FranzOpts = %d options, want %d", len(opts), tc.opts)
			}
			d := sec.Dialer()
			if (d.TLS != nil) != tc.tls || d.TLS != sec.TLS() || (d.SASLMechanism != nil) != tc.sasl {
				t.Errorf("Dialer: TLS %v, SASL %v; want TLS %v (the Security's), SASL %v", d.TLS != nil, d.SASLMechanism, tc.tls, tc.sasl)
			}
		})
	}
}

// TestKafkaGoSASL: kafka-go runs the franz-go mechanism Security builds: the same
// messages, and the password read again at each authentication.
func TestKafkaGoSASL(t *testing.T) {
	file := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(file, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, mechanism string
		first           func(password string) string // the client's first message
	}{
		{"PLAIN", "PLAIN", func(p string) string { return "\x00bob\x00" + p }},
		{"SCRAM", "SCRAM-SHA-256", func(string) string { return "n,,n=bob,r=" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sec, err := Config{SASLMechanism: tc.mechanism, SASLUsername: "bob", SASLPasswordFile: file}.Security()
			if err != nil {
				t.Fatal(err)
			}
			m := sec.Dialer().SASLMechanism
			if m.Name() != tc.mechanism {
				t.Errorf("Name = %q, want %q", m.Name(), tc.mechanism)
			}
			for _, password := range []string{"first", "second"} {
				if err := os.WriteFile(file, []byte(password+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				sm, first, err := m.Start(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if want := tc.first(password); !strings.HasPrefix(string(first), want) {
					t.Errorf("first message %q, want %q...", first, want)
				}
				if tc.mechanism == "PLAIN" {
					if done, resp, err := sm.Next(t.Context(), nil); !done || resp != nil || err != nil {
						t.Errorf("PLAIN Next = %v %q %v, want done", done, resp, err)
					}
				} else if _, _, err := sm.Next(t.Context(), []byte("garbage")); err == nil {
					t.Error("SCRAM accepted a garbage server-first message")
				}
			}
		})
	}
}

// TestKafkaGoSCRAMExchange runs a whole SCRAM exchange through kafka-go's interface
// against a SCRAM server (xdg-go/scram, the library kafka-go's own SCRAM uses): the
// right password is accepted, each way, and a wrong one refused.
func TestKafkaGoSCRAMExchange(t *testing.T) {
	for _, tc := range []struct {
		mechanism string
		hash      xscram.HashGeneratorFcn
	}{{"SCRAM-SHA-256", xscram.SHA256}, {"SCRAM-SHA-512", xscram.SHA512}} {
		for _, password := range []string{"right", "wrong"} {
			t.Run(tc.mechanism+"/"+password, func(t *testing.T) {
				client, err := tc.hash.NewClient("bob", "right", "")
				if err != nil {
					t.Fatal(err)
				}
				stored := client.GetStoredCredentials(xscram.KeyFactors{Salt: "salty", Iters: 4096})
				server, err := tc.hash.NewServer(func(user string) (xscram.StoredCredentials, error) {
					if user != "bob" {
						return xscram.StoredCredentials{}, fmt.Errorf("unknown user %q", user)
					}
					return stored, nil
				})
				if err != nil {
					t.Fatal(err)
				}
				sec, err := Config{SASLMechanism: tc.mechanism, SASLUsername: "bob", SASLPassword: password}.Security()
				if err != nil {
					t.Fatal(err)
				}
				sm, msg, err := sec.Dialer().SASLMechanism.Start(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				conv := server.NewConversation()
				done := false
				for step := 0; !done; step++ {
					if step > 3 {
						t.Fatal("no end to the exchange")
					}
					challenge, serr := conv.Step(string(msg))
					if serr != nil {
						if password == "right" {
							t.Fatalf("server refused step %d: %v", step, serr)
						}
						return // refused, as it should be
					}
					if done, msg, err = sm.Next(t.Context(), []byte(challenge)); err != nil {
						t.Fatalf("client step %d: %v", step, err)
					}
				}
				if password == "wrong" || !conv.Valid() {
					t.Errorf("exchange with the %s password done, server valid %v", password, conv.Valid())
				}
			})
		}
	}
}
