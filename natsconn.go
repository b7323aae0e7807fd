package main

import (
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// connectNATS connects to KRAFTWATCH_NATS_URL, or starts an embedded NATS server with
// JetStream when it is empty. The returned function drains the connection, waits for
// nats.go to report it closed (its ClosedHandler) and stops an embedded server.
func connectNATS(cfg natsSettings, log *slog.Logger) (*nats.Conn, func(), error) {
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
	closed := make(chan struct{})
	var closeOnce sync.Once
	opts := append([]nats.Option{
		nats.Name("kraftwatch"), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil { // nil: closed or drained on purpose
				log.Warn("NATS disconnected", "error", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("NATS reconnected", "url", c.ConnectedUrlRedacted()) }),
		nats.ClosedHandler(func(*nats.Conn) { closeOnce.Do(func() { close(closed) }) }),
		nats.RetryOnFailedConnect(true),
	}, cfg.opts...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		if embedded != nil {
			embedded.Shutdown()
		}
		return nil, nil, fmt.Errorf("NATS %s: %w", url, err)
	}
	return nc, func() {
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
