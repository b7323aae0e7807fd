package observer

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Defaults for Config.
const (
	DefaultPollInterval = 100 * time.Millisecond
	DefaultMinBackoff   = 100 * time.Millisecond
	DefaultMaxBackoff   = 10 * time.Second
)

// Config configures an Observer.
type Config struct {
	// Dir is the metadata log directory: <metadata.log.dir>/__cluster_metadata-0.
	Dir string
	// Logger receives the observer's logs; nil discards them.
	Logger *slog.Logger
	// Handler, when set, is called on Run's goroutine for every update, in log order.
	// It must not block for long: the observer reads nothing while it runs.
	Handler func(Update)
	// PollInterval is the period of the polling timer that backs up file
	// notifications (and replaces them when they are unavailable). 0 means
	// DefaultPollInterval.
	PollInterval time.Duration
	// MinBackoff and MaxBackoff bound the wait before retrying after an error (it
	// doubles from one to the other). 0 means the defaults.
	MinBackoff, MaxBackoff time.Duration
	// NoNotify disables file notifications: the observer only polls. For file systems
	// without inotify, and for tests that control time.
	NoNotify bool
	// Metrics receives the counters; nil means new ones (see Observer.Metrics).
	Metrics *Metrics
}

// Validate reports what is wrong with the config, one error per bad value.
func (c *Config) Validate() error {
	var errs []error
	if c.Dir == "" {
		errs = append(errs, errors.New("observer: Dir is empty"))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"PollInterval", c.PollInterval}, {"MinBackoff", c.MinBackoff}, {"MaxBackoff", c.MaxBackoff}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("observer: %s is negative (%v)", d.name, d.v))
		}
	}
	if c.MinBackoff > 0 && c.MaxBackoff > 0 && c.MinBackoff > c.MaxBackoff {
		errs = append(errs, fmt.Errorf("observer: MinBackoff %v is above MaxBackoff %v", c.MinBackoff, c.MaxBackoff))
	}
	return errors.Join(errs...)
}

func (c *Config) withDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	// Each bound left zero takes its default, kept on the right side of the other bound:
	// a zero MaxBackoff must not make MinBackoff tiny (that retried every nanosecond).
	switch {
	case c.MinBackoff == 0 && c.MaxBackoff == 0:
		c.MinBackoff, c.MaxBackoff = DefaultMinBackoff, DefaultMaxBackoff
	case c.MinBackoff == 0:
		c.MinBackoff = min(DefaultMinBackoff, c.MaxBackoff)
	case c.MaxBackoff == 0:
		c.MaxBackoff = max(DefaultMaxBackoff, c.MinBackoff)
	}
	if c.Metrics == nil {
		c.Metrics = newMetrics()
	}
}
