package kafkaconn

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// FranzOpts are the franz-go (kgo) client options of the connection: TLS (with a
// client certificate for mutual TLS) and SASL. The SASL password is read again at each
// authentication, so a rotated KAFKA_SASL_PASSWORD_FILE is picked up by the next
// connection.
func (c Config) FranzOpts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	tlsCfg, err := c.TLSConfig()
	if err != nil {
		return nil, err
	}
	if tlsCfg != nil {
		opts = append(opts, kgo.DialTLSConfig(tlsCfg))
	}
	if _, err := c.Password(); err != nil { // fail now on an unreadable file, not at the first connection
		return nil, err
	}
	user := c.SASLUsername
	var mech sasl.Mechanism
	switch c.SASLMechanism {
	case "PLAIN":
		mech = plain.Plain(func(context.Context) (plain.Auth, error) {
			p, err := c.Password()
			return plain.Auth{User: user, Pass: p}, err
		})
	case "SCRAM-SHA-256", "SCRAM-SHA-512":
		auth := func(context.Context) (scram.Auth, error) {
			p, err := c.Password()
			return scram.Auth{User: user, Pass: p}, err
		}
		if c.SASLMechanism == "SCRAM-SHA-256" {
			mech = scram.Sha256(auth)
		} else {
			mech = scram.Sha512(auth)
		}
	}
	if mech != nil {
		opts = append(opts, kgo.SASL(mech))
	}
	return opts, nil
}

// Principal is the Kafka principal the connection most likely authenticates as, for
// messages that name an ACL to add: User:<SASL user name>, User:<client certificate
// subject> with mutual TLS (Kafka's default principal builder uses the subject's
// distinguished name), else User:ANONYMOUS. A custom principal builder or
// ssl.principal.mapping.rules make it differ.
func (c Config) Principal() string {
	if c.SASLMechanism != "" {
		return "User:" + c.SASLUsername
	}
	if c.TLSCertFile != "" {
		if b, err := os.ReadFile(c.TLSCertFile); err == nil {
			if blk, _ := pem.Decode(b); blk != nil {
				if cert, err := x509.ParseCertificate(blk.Bytes); err == nil {
					return "User:" + cert.Subject.String()
				}
			}
		}
	}
	return "User:ANONYMOUS"
}
