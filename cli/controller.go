package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"syscall"
	"time"

	"github.com/kraftwatch/kraftwatch/kafkaconn"
	"github.com/kraftwatch/kraftwatch/observer"
)

// controllerFlagHelp is the help of --bootstrap-controller, which dump, hashes and
// verify take instead of a metadata log dir.
const controllerFlagHelp = "KRaft controller listeners (host:port, comma-separated): fetch the metadata log " +
	"from the quorum leader instead of reading a directory (plaintext; needs ClusterAction)"

// loadTimeout bounds loading the metadata log from the controllers.
const loadTimeout = 2 * time.Minute

// loadFromControllers fetches the metadata log from the controllers, as `kraftwatch
// run` does at start: the leader's snapshot and the log up to the high watermark. It
// returns the image and a description of where it came from.
func loadFromControllers(controllers string, stderr io.Writer) (*observer.Loaded, string, error) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	l, err := observer.LoadQuorum(ctx, observer.Config{Controllers: kafkaconn.SplitHosts(controllers), Logger: logger})
	if err != nil {
		return nil, "", err
	}
	source := "the controllers' log up to the high watermark"
	if l.Snapshot != "none" {
		source = l.Snapshot + " and the controllers' log after it, up to the high watermark"
	}
	return l, source, nil
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
