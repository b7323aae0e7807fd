package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/kafkaconn"
	"github.com/kraftwatch/kraftwatch/observer"
	"github.com/kraftwatch/kraftwatch/publish"
)

// run builds the stages from cfg and runs them until ctx ends. The HTTP server answers
// from the start (not ready, and why); the stages are built once the cluster id is
// known, their metrics registered, and on ctx's end they stop in order (stages.run),
// then NATS is drained and the HTTP server stops.
func run(ctx context.Context, cfg runConfig, log *slog.Logger) error {
	ready := newReadiness()
	reg := newHealthRegistry(ready.check)
	srv, err := startHTTP(cfg.httpAddr, httpHandler(ready.states, ready.live, reg, nil, nil), log)
	if err != nil {
		return err
	}
	defer srv.shutdown()
	if cfg.pprofAddr != "" {
		dbg, err := startHTTP(cfg.pprofAddr, pprofHandler(), log)
		if err != nil {
			return fmt.Errorf("KRAFTWATCH_PPROF_ADDR: %w", err)
		}
		defer dbg.shutdown()
		log.Info("profiling endpoint on", "pprof_addr", dbg.addr())
	}

	clusterID, err := waitClusterID(ctx, cfg, log, ready.waiting)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while waiting: nothing was started
		}
		return err
	}
	nc, drainNATS, err := connectNATS(cfg.nats, log)
	if err != nil {
		return err
	}
	defer drainNATS()
	ready.natsLive(nc.live)
	st, err := newStages(cfg, clusterID, nc.Conn, nc.health, log)
	if err != nil {
		return err
	}
	source := "disk"
	if cfg.networkMode() {
		source = "controllers"
	}
	registerMetrics(reg, st, buildInfo{version, clusterID, source, cfg.publish.HashScheme})
	ready.watch(st)
	srv.setHandler(httpHandler(ready.states, ready.live, reg, st.eng.Query, func() api.Status { return api.StatusOf(st.reader) }))
	log.Info("kraftwatch running", "version", version, "cluster_id", clusterID, "metadata_source", cfg.metadataSource(),
		"bootstrap_servers", strings.Join(cfg.brokers, ","), "hash_scheme", cfg.publish.HashScheme, "http_addr", srv.addr())

	return st.run(ctx, func() {
		if ctx.Err() != nil {
			log.Info("shutting down: readiness off, finishing in-flight events")
		}
		ready.shutdown()
	})
}

// stages are kraftwatch's long-lived parts: the observer (metadata log) and the groups
// reader (__consumer_offsets) feed the engine, which decides and hands events to the
// publisher.
type stages struct {
	obs        *observer.Observer
	reader     *groups.Reader
	eng        *engine.Engine
	pub        *publish.Publisher
	rebalanced *rebalanceMetrics // fed by the engine
	// groupMetrics takes snapshots of the engine's group state for /metrics.
	groupMetrics *groupsCollector
	stallAfter   time.Duration // how long the observer may fail before it is not ready
}

// newStages builds every stage; none runs until run.
// natsHealth says why nc is not connected (natsConn.health); nil for none.
func newStages(cfg runConfig, clusterID string, nc *nats.Conn, natsHealth func() error, log *slog.Logger) (*stages, error) {
	st := &stages{rebalanced: newRebalanceMetrics(), stallAfter: cfg.stallAfter}
	pcfg := cfg.publish
	pcfg.Conn, pcfg.ClusterID, pcfg.Logger, pcfg.ConnHealth = nc, clusterID, log.With("stage", "publish"), natsHealth
	var err error
	if st.pub, err = publish.New(pcfg); err != nil {
		return nil, err
	}
	st.reader, err = groups.NewReader(groups.ReaderConfig{
		Brokers: cfg.brokers, Dialer: cfg.kafka.Dialer(), Logger: log.With("stage", "groups"), StallAfter: cfg.stallAfter,
	})
	if err != nil {
		return nil, err
	}
	st.eng, err = engine.New(engine.Config{
		ClusterID:      clusterID,
		Scheme:         cfg.publish.HashScheme,
		Include:        cfg.include,
		Exclude:        cfg.exclude,
		GroupsCaughtUp: st.reader.CaughtUp(),
		Publisher:      st.pub,
		MismatchAfter:  cfg.mismatchAfter,
		Rebalanced:     cfg.rebalanced,
		OnRebalanced:   st.rebalanced.observe,
		Logger:         log.With("stage", "engine"),
	})
	if err != nil {
		return nil, err
	}
	// In network mode the cluster id goes with every fetch: controllers of another
	// cluster refuse them.
	ocfg := cfg.observerConfig(clusterID)
	ocfg.Logger, ocfg.Handler = log.With("stage", "observer"), st.eng.OnMetadata
	ocfg.LoadGC = os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" // the runtime's own settings win
	if st.obs, err = observer.New(ocfg); err != nil {
		return nil, err
	}
	st.groupMetrics = newGroupsCollector(st.eng.Query, cfg.perGroup)
	return st, nil
}

// run runs the stages until ctx ends or one fails, then stops them in order: the
// inputs and the engine first, the publisher once the engine has handed over its last
// event, so that nothing decided is lost. stopping is called as the first ones stop.
func (st *stages) run(ctx context.Context, stopping func()) error {
	return runInOrder(ctx, stopping,
		[]stage{
			{"observer", st.obs.Run},
			{"groups", func(ctx context.Context) error {
				if err := st.reader.Run(ctx, st.eng.OnGroupRecords); !errors.Is(err, engine.ErrStopped) {
					return err
				}
				return nil // the engine stopped first, on shutdown or its own error
			}},
			{"engine", st.eng.Run},
			{"group metrics", st.groupMetrics.Run},
		},
		[]stage{{"publish", st.pub.Run}},
	)
}

// stage is one long-lived part, named for its errors.
type stage struct {
	name string
	run  func(context.Context) error
}

// runInOrder runs every stage of every phase at once, until ctx ends or a stage fails
// (returns an error other than context.Canceled). Then it calls stopping and stops the
// phases in order: the first phase's context ends, and each later phase's only once
// every stage of the phase before it has returned. It returns once all have returned,
// with every stage's failure.
func runInOrder(ctx context.Context, stopping func(), phases ...[]stage) error {
	var (
		mu       sync.Mutex
		failures []error
		failed   = make(chan struct{})
		fail     sync.Once
		wgs      = make([]sync.WaitGroup, len(phases))
		cancels  = make([]context.CancelFunc, len(phases))
	)
	for i, phase := range phases {
		var pctx context.Context
		pctx, cancels[i] = context.WithCancel(context.WithoutCancel(ctx))
		for _, s := range phase {
			wgs[i].Go(func() {
				if err := s.run(pctx); err != nil && !errors.Is(err, context.Canceled) {
					mu.Lock()
					failures = append(failures, fmt.Errorf("%s: %w", s.name, err))
					mu.Unlock()
					fail.Do(func() { close(failed) })
				}
			})
		}
	}
	select {
	case <-ctx.Done():
	case <-failed:
	}
	stopping()
	for i := range phases {
		cancels[i]()
		wgs[i].Wait()
	}
	mu.Lock()
	defer mu.Unlock()
	return errors.Join(failures...)
}

// waitClusterID is the cluster id: KRAFTWATCH_CLUSTER_ID or meta.properties beside the
// metadata log in disk mode. In network mode it is KRAFTWATCH_CLUSTER_ID or the
// brokers' answer to Metadata (which needs no ACL), confirmed by the controllers (a
// Fetch carrying it: ClusterAction, what network mode needs anyway) before anything
// touches NATS, so that no stream is made for a wrong id. Failures to ask are retried
// with backoff (and a log line saying what to do) until ctx ends; waiting reports
// each so /readyz can say why kraftwatch is not ready. An id the controllers refuse
// ends run with an error naming the setting.
func waitClusterID(ctx context.Context, cfg runConfig, log *slog.Logger, waiting func(error)) (string, error) {
	if !cfg.networkMode() {
		return cfg.readClusterID()
	}
	id := cfg.clusterID
	for backoff := time.Second; ; backoff = min(2*backoff, 30*time.Second) {
		var err error
		if id == "" {
			if id, err = brokerClusterID(ctx, cfg); err != nil {
				err = fmt.Errorf("asking the brokers in %sBOOTSTRAP_SERVERS for the cluster id (or set %sCLUSTER_ID): %w",
					envPrefix, envPrefix, err)
			}
		}
		if err == nil {
			dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			oc := cfg.observerConfig(id)
			err = observer.ConfirmClusterID(dctx, oc)
			cancel()
			switch {
			case err == nil:
				return id, nil
			case errors.Is(err, kerr.InconsistentClusterID) && cfg.clusterID != "":
				return "", fmt.Errorf("%sCLUSTER_ID %q is not the cluster id of the controllers in %sCONTROLLER_BOOTSTRAP_SERVERS: %w",
					envPrefix, id, envPrefix, err)
			case errors.Is(err, kerr.InconsistentClusterID):
				return "", fmt.Errorf("the brokers in %sBOOTSTRAP_SERVERS (cluster id %q) and the controllers in "+
					"%sCONTROLLER_BOOTSTRAP_SERVERS belong to different clusters: %w", envPrefix, id, envPrefix, err)
			}
			err = fmt.Errorf("confirming cluster id %q with the controllers: %w", id, err)
			if cfg.clusterID == "" {
				id = "" // ask the brokers again next time
			}
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		msg := "the cluster id is not confirmed yet; retrying"
		if errors.Is(err, observer.ErrNotAuthorized) {
			// As the observer's own refusal: a grant is picked up within maxAuthBackoff.
			oc := cfg.observerConfig(id)
			msg = "the controllers refuse to serve the metadata log: add the ACL `" +
				observer.GrantCommand(&oc, oc.Controllers[0]) + "`; retrying"
			backoff = min(backoff, maxAuthBackoff)
		}
		log.Error(msg, "error", err, "retry_in", backoff)
		waiting(err)
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(backoff):
		}
	}
}

// maxAuthBackoff bounds the wait between two asks while the controllers refuse
// kraftwatch, so that a grant is picked up soon.
const maxAuthBackoff = 5 * time.Second

// brokerClusterID asks the brokers for the cluster id: a Metadata request for no
// topic, which every client may send.
func brokerClusterID(ctx context.Context, cfg runConfig) (string, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.brokers...), kgo.ClientID(kafkaconn.ClientID),
		kgo.RequestRetries(0)}, cfg.kafka.FranzOpts()...)...)
	if err != nil {
		return "", err
	}
	defer cl.Close()
	mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // none, not all
	resp, err := req.RequestWith(mctx, cl)
	if err != nil {
		return "", err
	}
	if resp.ClusterID == nil || *resp.ClusterID == "" {
		return "", errors.New("the Metadata answer has no cluster id")
	}
	return *resp.ClusterID, nil
}
