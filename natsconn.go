package main

import (
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// natsLogEvery is how often a NATS connection that keeps failing logs a summary of
// its attempts, after the first failure's line.
const natsLogEvery = 30 * time.Second

// natsConn is a NATS connection with its health: why it is not connected (the cause of
// the last failed attempt or of the disconnection, with the setting to check), and
// whether it closed without being asked to, which no retry undoes. Its methods are safe
// for concurrent use.
type natsConn struct {
	*nats.Conn
	url string // the configured URLs, for messages
	log *slog.Logger

	mu       sync.Mutex
	cause    error     // nil while connected
	since    time.Time // when cause began
	attempts int       // failed attempts since cause began
	logged   time.Time // when the last line about cause was logged
	told     bool      // a line about cause was logged
	draining bool      // closed on purpose
	closed   bool
	// asyncErrs rate-limits the server's asynchronous errors (a permissions violation
	// comes with every publish): by error text, when last logged and how many since.
	asyncErrs map[string]*asyncErr
}

type asyncErr struct {
	logged time.Time
	count  int
}

// asyncError logs an asynchronous error of the server: the first of its text at once,
// then a line with the count every natsLogEvery while it recurs.
func (c *natsConn) asyncError(sub *nats.Subscription, err error) {
	now := time.Now()
	c.mu.Lock()
	if c.asyncErrs == nil {
		c.asyncErrs = map[string]*asyncErr{}
	}
	e := c.asyncErrs[err.Error()]
	if e == nil {
		if len(c.asyncErrs) >= 64 { // texts with ids in them: forget the old ones
			clear(c.asyncErrs)
		}
		e = &asyncErr{}
		c.asyncErrs[err.Error()] = e
	}
	e.count++
	first := e.logged.IsZero()
	if !first && now.Sub(e.logged) < natsLogEvery {
		c.mu.Unlock()
		return
	}
	n := e.count
	e.logged, e.count = now, 0
	c.mu.Unlock()
	args := []any{"url", redactURLs(c.url), "error", natsCause(c.url, err)}
	if sub != nil {
		args = append(args, "subject", sub.Subject)
	}
	if !first {
		args = append(args, "occurrences", n)
	}
	c.log.Warn("NATS error", args...)
}

// health is nil while connected, else why not.
func (c *natsConn) health() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.Conn == nil:
		return fmt.Errorf("connecting to NATS %s", redactURLs(c.url))
	case c.closed && !c.draining:
		return fmt.Errorf("NATS connection to %s closed and not retried (last error: %v); kraftwatch must be restarted", redactURLs(c.url), c.Conn.LastError())
	case c.Conn.IsConnected():
		return nil
	case c.cause != nil:
		return c.cause
	}
	// nats.go reports no callback for a server refusing the credentials before the
	// first connection: its last error says why.
	if err := c.Conn.LastError(); err != nil {
		c.failLocked("cannot connect to NATS", err)
		return c.cause
	}
	return fmt.Errorf("connecting to NATS %s", redactURLs(c.url))
}

// live is an error when the connection can never come back without a restart: closed,
// not on purpose (nats.go gave up).
func (c *natsConn) live() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed && !c.draining {
		return fmt.Errorf("NATS connection to %s closed for good", c.url)
	}
	return nil
}

// failed records a failed attempt or a disconnection: the first is logged at once,
// later ones in a summary every natsLogEvery.
func (c *natsConn) failed(what string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failLocked(what, err)
}

func (c *natsConn) failLocked(what string, err error) {
	if c.draining {
		return
	}
	// nats.go says only "no servers available" for some attempts (between two rounds of
	// the server list): keep the cause an attempt gave, and log the first real one.
	vague := errors.Is(err, nats.ErrNoServers)
	if vague && c.cause != nil {
		c.attempts++
		return
	}
	cause := natsCause(c.url, err)
	now := time.Now()
	if c.cause == nil {
		c.since, c.attempts, c.logged, c.told = now, 0, now, false
	}
	c.cause = cause
	c.attempts++
	switch {
	case !c.told && !vague:
		c.told, c.logged = true, now
		c.log.Warn(what+"; retrying", "url", redactURLs(c.url), "error", cause)
	case now.Sub(c.logged) >= natsLogEvery:
		c.told, c.logged = true, now
		c.log.Warn("NATS still unreachable; retrying", "url", redactURLs(c.url), "attempts", c.attempts,
			"down_for", now.Sub(c.since).Round(time.Second), "error", cause)
	}
}

// connected clears the cause, logging the recovery when there was one.
func (c *natsConn) connected(nc *nats.Conn, what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cause != nil && c.told {
		c.log.Info(what, "url", nc.ConnectedUrlRedacted(), "attempts", c.attempts,
			"down_for", time.Since(c.since).Round(time.Millisecond))
	} else {
		c.log.Info(what, "url", nc.ConnectedUrlRedacted())
	}
	c.cause = nil
}

// natsCause wraps err, a failure to connect to or stay connected with NATS at url,
// with the setting an operator should check.
func natsCause(url string, err error) error {
	var (
		dnsErr  *net.DNSError
		certErr *x509.UnknownAuthorityError
		invErr  x509.CertificateInvalidError
		hostErr x509.HostnameError
		opErr   *net.OpError
	)
	msg := strings.ToLower(err.Error())
	var hint string
	switch {
	case errors.Is(err, nats.ErrAuthExpired) || strings.Contains(msg, "expired") && strings.Contains(msg, "authentication"):
		hint = envPrefix + "NATS_CREDS_FILE (the user JWT expired)"
	case errors.Is(err, nats.ErrAuthorization) || strings.Contains(msg, "authorization violation") || strings.Contains(msg, "authentication"):
		hint = envPrefix + "NATS_USER and " + envPrefix + "NATS_PASSWORD, " + envPrefix + "NATS_TOKEN or " + envPrefix + "NATS_CREDS_FILE"
	case errors.Is(err, nats.ErrPermissionViolation) || strings.Contains(msg, "permissions violation"):
		hint = "the NATS user's permissions (publish and subscribe on the stream's subjects, $JS.API.>, _INBOX.>)"
	case errors.As(err, &certErr) || errors.As(err, &invErr) || errors.As(err, &hostErr) || strings.Contains(msg, "x509:"):
		hint = envPrefix + "NATS_TLS_CA_FILE (it must sign the server's certificate, which must be valid and name the host of " + envPrefix + "NATS_URL)"
	case strings.Contains(msg, "tls:") || errors.Is(err, nats.ErrSecureConnRequired) || errors.Is(err, nats.ErrSecureConnWanted):
		hint = envPrefix + "NATS_TLS_CERT_FILE, " + envPrefix + "NATS_TLS_KEY_FILE, " + envPrefix + "NATS_TLS_CA_FILE and the URL scheme (tls://) of " + envPrefix + "NATS_URL"
	case errors.As(err, &dnsErr), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, nats.ErrNoServers),
		errors.As(err, &opErr), errors.Is(err, nats.ErrStaleConnection), errors.Is(err, os.ErrDeadlineExceeded):
		hint = envPrefix + "NATS_URL and that the NATS server answers"
	default:
		hint = envPrefix + "NATS_URL and the NATS server's log"
	}
	return fmt.Errorf("NATS %s: %w; check %s", redactURLs(url), err, hint)
}

// redactURLs hides passwords in a comma-separated list of NATS URLs.
func redactURLs(urls string) string {
	var out []string
	for _, u := range strings.Split(urls, ",") {
		if at := strings.LastIndex(u, "@"); at >= 0 {
			if i := strings.Index(u, "://"); i >= 0 && i < at {
				u = u[:i+3] + "***" + u[at:]
			}
		}
		out = append(out, u)
	}
	return strings.Join(out, ",")
}

// connectNATS connects to KRAFTWATCH_NATS_URL, or starts an embedded NATS server with
// JetStream when it is empty. It does not wait for a server to answer: the connection
// keeps retrying (every second, with jitter, for ever, authorization errors included:
// credentials are the server's to change, a restart would not change ours) and health
// says why it is not connected. A hung server is left for another one of the list
// after KRAFTWATCH_NATS_PING_INTERVAL × (KRAFTWATCH_NATS_MAX_PINGS_OUT+1). The returned
// function drains the connection, waits for nats.go to report it closed (its
// ClosedHandler) and stops an embedded server.
func connectNATS(cfg natsSettings, log *slog.Logger) (*natsConn, func(), error) {
	var embedded *server.Server
	url := cfg.url
	if url == "" {
		dir := cfg.embeddedDir
		if dir == "" {
			var err error
			if dir, err = os.MkdirTemp("", "kraftwatch-nats-"); err != nil {
				return nil, nil, err
			}
		}
		s, err := server.NewServer(&server.Options{
			ServerName: "kraftwatch-embedded", Host: "127.0.0.1", Port: cfg.embeddedPort, JetStream: true, StoreDir: dir, NoSigs: true,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("embedded NATS: %w", err)
		}
		s.Start()
		if !s.ReadyForConnections(10 * time.Second) {
			s.Shutdown()
			return nil, nil, fmt.Errorf("embedded NATS: not ready after 10s (is port %d taken? set KRAFTWATCH_NATS_URL)", cfg.embeddedPort)
		}
		embedded, url = s, s.ClientURL()
		log.Info("started embedded NATS server with JetStream", "url", url, "store_dir", dir)
	}
	c := &natsConn{url: url, log: log}
	closed := make(chan struct{})
	var closeOnce sync.Once
	opts := append([]nats.Option{
		nats.Name("kraftwatch"), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		nats.RetryOnFailedConnect(true), nats.IgnoreAuthErrorAbort(),
		nats.ConnectHandler(func(nc *nats.Conn) { c.connected(nc, "NATS connected") }),
		nats.ReconnectHandler(func(nc *nats.Conn) { c.connected(nc, "NATS reconnected") }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil { // nil: closed or drained on purpose
				c.failed("NATS disconnected", err)
			}
		}),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) { c.failed("cannot connect to NATS", err) }),
		nats.ErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
			if sub == nil && !nc.IsConnected() {
				c.failed("NATS refused the connection", err)
				return
			}
			c.asyncError(sub, err)
		}),
		nats.ClosedHandler(func(*nats.Conn) {
			c.mu.Lock()
			c.closed = true
			if !c.draining {
				log.Error("NATS connection closed for good; /livez fails so that kraftwatch is restarted", "url", redactURLs(url))
			}
			c.mu.Unlock()
			closeOnce.Do(func() { close(closed) })
		}),
	}, cfg.opts...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		if embedded != nil {
			embedded.Shutdown()
		}
		return nil, nil, fmt.Errorf("NATS %s: %w", redactURLs(url), err)
	}
	c.mu.Lock()
	c.Conn = nc
	c.mu.Unlock()
	return c, func() {
		c.mu.Lock()
		c.draining = true
		c.mu.Unlock()
		if err := nc.Drain(); err != nil {
			nc.Close() // already closed, or not connected: nothing to drain
		}
		// Drain closes the connection when done, or after its own timeout
		// (nats.DrainTimeout, 30 s by default); the bound here is only a safeguard.
		select {
		case <-closed:
		case <-time.After(nats.DefaultDrainTimeout + 5*time.Second):
			log.Warn("NATS connection not closed after draining; stopping anyway")
		}
		if embedded != nil {
			embedded.Shutdown()
			embedded.WaitForShutdown()
		}
	}, nil
}
