package kafkaconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	kafkagosasl "github.com/segmentio/kafka-go/sasl"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Security is a Config validated and loaded: the TLS configuration (nil without TLS),
// the SASL mechanism (nil without SASL) and the principal they authenticate as. Both
// clients are built from it.
type Security struct {
	tls       *tls.Config
	mechanism sasl.Mechanism
	principal string
}

// Security validates c and loads it. Its errors are those of Validate, or a
// *FieldError for a file that could not be loaded after all.
func (c Config) Security() (*Security, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	s := &Security{principal: "User:ANONYMOUS"}
	if c.UsesTLS() {
		cfg, err := TLSFiles(c.TLSCAFile, c.TLSCertFile, c.TLSKeyFile)
		if err != nil {
			return nil, &FieldError{Field: "TLS_CA_FILE", Msg: err.Error()}
		}
		cfg.InsecureSkipVerify = c.TLSInsecure
		s.tls = cfg
		// Kafka's default principal builder names a mutual TLS client by its
		// certificate's subject.
		if len(cfg.Certificates) > 0 {
			if cert, err := x509.ParseCertificate(cfg.Certificates[0].Certificate[0]); err == nil {
				s.principal = "User:" + cert.Subject.String()
			}
		}
	}
	if c.SASLMechanism != "" {
		s.principal = "User:" + c.SASLUsername
	}
	user := c.SASLUsername
	switch c.SASLMechanism {
	case "PLAIN":
		s.mechanism = plain.Plain(func(context.Context) (plain.Auth, error) {
			p, err := c.Password()
			return plain.Auth{User: user, Pass: p}, err
		})
	case "SCRAM-SHA-256", "SCRAM-SHA-512":
		auth := func(context.Context) (scram.Auth, error) {
			p, err := c.Password()
			return scram.Auth{User: user, Pass: p}, err
		}
		if c.SASLMechanism == "SCRAM-SHA-256" {
			s.mechanism = scram.Sha256(auth)
		} else {
			s.mechanism = scram.Sha512(auth)
		}
	}
	return s, nil
}

// Principal is the Kafka principal the connection most likely authenticates as, for
// messages that name an ACL to add: User:<SASL user name>, User:<client certificate
// subject> with mutual TLS (Kafka's default principal builder uses the subject's
// distinguished name), else User:ANONYMOUS. A custom principal builder or
// ssl.principal.mapping.rules make it differ.
func (s *Security) Principal() string { return s.principal }

// TLS is the TLS configuration, nil without TLS. Callers must not modify it.
func (s *Security) TLS() *tls.Config { return s.tls }

// FranzOpts are the franz-go (kgo) client options of the connection: TLS and SASL.
// The caller adds seed brokers, client id and timeouts.
func (s *Security) FranzOpts() []kgo.Opt {
	var opts []kgo.Opt
	if s.tls != nil {
		opts = append(opts, kgo.DialTLSConfig(s.tls))
	}
	if s.mechanism != nil {
		opts = append(opts, kgo.SASL(s.mechanism))
	}
	return opts
}

// Dialer is the kafka-go dialer of the __consumer_offsets reader: the same TLS
// configuration and SASL mechanism as FranzOpts.
func (s *Security) Dialer() *kafkago.Dialer {
	d := &kafkago.Dialer{Timeout: 10 * time.Second, DualStack: true, ClientID: ClientID, TLS: s.tls}
	if s.mechanism != nil {
		d.SASLMechanism = kafkaGoMechanism{s.mechanism}
	}
	return d
}

// kafkaGoMechanism runs a franz-go SASL mechanism for kafka-go: kafka-go's Start is
// franz-go's Authenticate, and its StateMachine.Next is franz-go's Session.Challenge.
type kafkaGoMechanism struct{ m sasl.Mechanism }

func (k kafkaGoMechanism) Name() string { return k.m.Name() }

func (k kafkaGoMechanism) Start(ctx context.Context) (kafkagosasl.StateMachine, []byte, error) {
	host := ""
	if md := kafkagosasl.MetadataFromContext(ctx); md != nil {
		host = fmt.Sprintf("%s:%d", md.Host, md.Port)
	}
	session, first, err := k.m.Authenticate(ctx, host)
	if err != nil {
		return nil, nil, err
	}
	return kafkaGoSession{session}, first, nil
}

type kafkaGoSession struct{ s sasl.Session }

// errLastMessage: kafka-go sends nothing after the exchange is done, which no
// mechanism kraftwatch supports asks for.
var errLastMessage = errors.New("kafkaconn: SASL mechanism sends a message after the exchange is done, which kafka-go cannot")

func (k kafkaGoSession) Next(_ context.Context, challenge []byte) (bool, []byte, error) {
	done, msg, err := k.s.Challenge(challenge)
	if err == nil && done && len(msg) > 0 {
		err = errLastMessage
	}
	return done, msg, err
}
