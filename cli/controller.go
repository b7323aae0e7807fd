package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/kraftwatch/kraftwatch/kafkaconn"
	"github.com/kraftwatch/kraftwatch/observer"
)

// controllerFlagHelp is the help of --bootstrap-controller, which dump, hashes and
// verify take instead of a metadata log dir.
const controllerFlagHelp = "KRaft controller listeners (host:port, comma-separated): fetch the metadata log " +
	"from the quorum leader instead of reading a directory (TLS and SASL from KRAFTWATCH_CONTROLLER_*; needs ClusterAction)"

// loadTimeout bounds loading the metadata log from the controllers.
const loadTimeout = 2 * time.Minute

// loadFromControllers fetches the metadata log from the controllers, as `kraftwatch
// run` does at start: the leader's snapshot and the log up to the high watermark. It
// returns the image and a description of where it came from.
func loadFromControllers(controllers string, environ []string, stderr io.Writer) (*observer.Loaded, string, error) {
	sec, err := controllerSecurity(environ)
	if err != nil {
		return nil, "", err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	l, err := observer.LoadQuorum(ctx, observer.Config{Controllers: kafkaconn.SplitHosts(controllers), Logger: logger,
		ClientOpts: sec.FranzOpts(), Principal: sec.Principal()})
	if err != nil {
		return nil, "", err
	}
	source := "the controllers' log up to the high watermark"
	if l.Snapshot != "none" {
		source = l.Snapshot + " and the controllers' log after it, up to the high watermark"
	}
	return l, source, nil
}

// controllerEnvPrefix is where the controller listener's security settings are read
// from: the same variables as kraftwatch run's.
const controllerEnvPrefix = "KRAFTWATCH_CONTROLLER_"

// controllerSecurity reads KRAFTWATCH_CONTROLLER_TLS* and _SASL_* from environ.
func controllerSecurity(environ []string) (*kafkaconn.Security, error) {
	var c kafkaconn.Config
	vars := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	if err := env.ParseWithOptions(&c, env.Options{Prefix: controllerEnvPrefix, Environment: vars}); err != nil {
		return nil, err
	}
	sec, err := c.Security()
	var errs []error
	for _, e := range unwrapAll(err) {
		var fe *kafkaconn.FieldError
		if errors.As(e, &fe) {
			e = fmt.Errorf("%s%s: %s", controllerEnvPrefix, fe.Field, strings.ReplaceAll(fe.Msg, "KAFKA_", "CONTROLLER_"))
		}
		errs = append(errs, e)
	}
	return sec, errors.Join(errs...)
}

func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// oneSource checks that exactly one of a directory argument and
// --bootstrap-controller was given.
func oneSource(nargs int, controllers string) error {
	switch {
	case controllers == "" && nargs != 1:
		return fmt.Errorf("give a metadata log dir or --bootstrap-controller")
	case controllers != "" && nargs != 0:
		return fmt.Errorf("give either a metadata log dir or --bootstrap-controller, not both")
	}
	return nil
}
