package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/kafkaconn"
	"github.com/kraftwatch/kraftwatch/observer"
	"github.com/kraftwatch/kraftwatch/publish"
)

// run builds the stages from cfg and runs them until ctx ends: observer (metadata log)
// and groups reader (__consumer_offsets) feed the engine, which decides and hands
// events to the publisher. On ctx's end /readyz fails first, then the engine stops,
// the publisher drains and NATS is drained.
func run(ctx context.Context, cfg config, log *slog.Logger) error {
	// The HTTP server answers from the start: /readyz says why kraftwatch is not ready
	// while, in network mode, it waits for the controllers to tell the cluster id.
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("HTTP: %w", err)
	}
	var handler atomic.Pointer[http.Handler]
	setHandler := func(h http.Handler) { handler.Store(&h) }
	srv := &http.Server{Addr: cfg.HTTPAddr, ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*handler.Load()).ServeHTTP(w, r) })}
	var stopping sync.WaitGroup
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		srv.Shutdown(sctx)
		cancel()
		stopping.Wait()
	}()
	// One registry for the life of the process, with kraftwatch_ready (and the Go and
	// process metrics) from the start, so that a scrape sees kraftwatch is not ready
	// rather than no kraftwatch; the stages' metrics join it once they are built.
	var readyCheck atomic.Pointer[func() error] // what /readyz and kraftwatch_ready ask
	ready := func() error { return (*readyCheck.Load())() }
	reg := newHealthRegistry(ready)
	waiting := func(err error) { // until the stages exist: not ready, for the reason given
		f := func() error { return notReady{{Component: "metadata", Reason: err.Error()}} }
		readyCheck.Store(&f)
	}
	waiting(errors.New("starting"))
	setHandler(httpHandler(ready, reg, nil))
	stopping.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("HTTP server", "error", err)
		}
	})
	clusterID, err := waitClusterID(ctx, cfg, log, waiting)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while waiting: nothing was started
		}
		return err
	}
	dialer, err := cfg.Kafka.Dialer()
	if err != nil {
		return err
	}
	nc, shutdownNATS, err := connectNATS(cfg, log)
	if err != nil {
		return err
	}
	defer shutdownNATS()

	mode, _ := publish.ParseMode(cfg.NATSMode)
	maxAge, _ := time.ParseDuration(cfg.StreamMaxAge)
	eventsStream, noEvents := cfg.EventsStream, cfg.EventsStream == noEventsStream
	if noEvents {
		eventsStream = ""
	}
	pub, err := publish.New(publish.Config{
		Conn: nc, Mode: mode, Prefix: cfg.SubjectPrefix, ClusterID: clusterID, HashScheme: cfg.HashScheme,
		Stream: cfg.StreamName, EventsStream: eventsStream, NoEventsStream: noEvents,
		Replicas: cfg.StreamReplicas, MaxAge: maxAge,
		MaxMsgsPerSubject: cfg.StreamMaxMsgsPerSubject, Logger: log.With("stage", "publish"),
	})
	if err != nil {
		return err
	}
	stallAfter, _ := time.ParseDuration(cfg.StallAfter)
	reader, err := groups.NewReader(groups.ReaderConfig{
		Brokers: kafkaconn.SplitHosts(cfg.BootstrapServers), Dialer: dialer, Logger: log.With("stage", "groups"),
		StallAfter: stallAfter,
	})
	if err != nil {
		return err
	}
	mismatchAfter, _ := time.ParseDuration(cfg.MismatchAfter)
	var exclude *regexp.Regexp
	if cfg.GroupExclude != "" {
		exclude = regexp.MustCompile("^(?:" + cfg.GroupExclude + ")$")
	}
	rebalanced := newRebalanceMetrics()
	eng, err := engine.New(engine.Config{
		ClusterID:      clusterID,
		Scheme:         cfg.HashScheme,
		Include:        regexp.MustCompile("^(?:" + cfg.GroupInclude + ")$"),
		Exclude:        exclude,
		GroupsCaughtUp: reader.CaughtUp(),
		Publisher:      pub,
		MismatchAfter:  mismatchAfter,
		Rebalanced:     cfg.RebalancedEvents,
		OnRebalanced:   rebalanced.observe,
		Logger:         log.With("stage", "engine"),
	})
	if err != nil {
		return err
	}
	ocfg, err := cfg.observerConfig()
	if err != nil {
		return err
	}
	ocfg.Logger, ocfg.Handler = log.With("stage", "observer"), eng.OnMetadata
	ocfg.LoadGC = os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" // the runtime's own settings win
	if cfg.networkMode() {
		ocfg.ClusterID = clusterID // controllers of another cluster refuse the fetches
	}
	obs, err := observer.New(ocfg)
	if err != nil {
		return err
	}

	shutdown := make(chan struct{})
	stagesReady := func() error {
		var ps notReady
		add := func(component string, err error) {
			if err != nil {
				ps = append(ps, problem{Component: component, Reason: err.Error()})
			}
		}
		select {
		case <-shutdown:
			add("kraftwatch", errors.New("shutting down"))
		default:
		}
		add("metadata", obs.Health(stallAfter))
		select {
		case <-reader.CaughtUp():
			add("groups", reader.Health())
		default:
			add("groups", fmt.Errorf("catching up with __consumer_offsets: %d records behind", reader.Lag()))
		}
		if !pub.Ready() {
			add("nats", errors.New("NATS is not reachable"))
		} else {
			add("engine", eng.Ready()) // with NATS up: the start-up comparison is not done
		}
		if len(ps) == 0 {
			return nil
		}
		return ps
	}
	source := "disk"
	if cfg.networkMode() {
		source = "controllers"
	}
	info := []string{version, clusterID, source, cfg.HashScheme}
	readyCheck.Store(&stagesReady)
	registerStages(reg, info, obs, reader, pub, eng)
	var perGroup *regexp.Regexp
	if cfg.GroupMetrics != "" {
		perGroup = regexp.MustCompile("^(?:" + cfg.GroupMetrics + ")$")
	}
	reg.MustRegister(newGroupsCollector(eng.Query, perGroup))
	rebalanced.register(reg)
	setHandler(httpHandler(ready, reg, eng.Query))
	log.Info("kraftwatch running", "version", version, "cluster_id", clusterID, "metadata_source", cfg.metadataSource(),
		"bootstrap_servers", cfg.BootstrapServers, "hash_scheme", cfg.HashScheme, "http_addr", ln.Addr().String())

	// The stages stop in order: inputs and engine when ctx ends, the publisher once
	// the engine has handed over its last event, so nothing decided is lost.
	inputCtx, stopInputs := context.WithCancelCause(context.Background())
	pubCtx, stopPub := context.WithCancel(context.Background())
	var inputs, publisher sync.WaitGroup
	var mu sync.Mutex
	var failures []error
	stage := func(wg *sync.WaitGroup, name string, ctx context.Context, fn func(context.Context) error) {
		wg.Go(func() {
			if err := fn(ctx); err != nil && !errors.Is(err, context.Canceled) {
				mu.Lock()
				failures = append(failures, fmt.Errorf("%s: %w", name, err))
				mu.Unlock()
				stopInputs(err)
			}
		})
	}
	stage(&publisher, "publish", pubCtx, pub.Run)
	stage(&inputs, "observer", inputCtx, obs.Run)
	stage(&inputs, "groups", inputCtx, func(ctx context.Context) error {
		if err := reader.Run(ctx, eng.OnGroupRecord); !errors.Is(err, engine.ErrStopped) {
			return err
		}
		return nil // the engine stopped first, on shutdown or its own error
	})
	stage(&inputs, "engine", inputCtx, eng.Run)
	select {
	case <-ctx.Done():
		log.Info("shutting down: readiness off, finishing in-flight events")
	case <-inputCtx.Done():
	}
	close(shutdown)
	stopInputs(context.Canceled)
	inputs.Wait()
	stopPub()
	publisher.Wait()
	return errors.Join(failures...)
}

// waitClusterID is the cluster id: KRAFTWATCH_CLUSTER_ID, meta.properties beside the
// metadata log, or in network mode the controllers' answer to DescribeCluster, asked
// again with backoff (and a log line saying what to do) until they answer or ctx
// ends; waiting reports each failure so /readyz can say why kraftwatch is not ready.
func waitClusterID(ctx context.Context, cfg config, log *slog.Logger, waiting func(error)) (string, error) {
	if cfg.ClusterID != "" || !cfg.networkMode() {
		return cfg.clusterID()
	}
	oc, err := cfg.observerConfig()
	if err != nil {
		return "", err
	}
	for backoff := time.Second; ; backoff = min(2*backoff, 30*time.Second) {
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		id, err := observer.DescribeCluster(dctx, oc)
		cancel()
		if err == nil {
			return id, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		hint := "retrying"
		if errors.Is(err, kerr.ClusterAuthorizationFailed) {
			hint = fmt.Sprintf("grant it (kafka-acls --bootstrap-controller %s --add --allow-principal %s --operation Alter --cluster) "+
				"or set %sCLUSTER_ID; retrying", oc.Controllers[0], oc.Principal, envPrefix)
		}
		err = fmt.Errorf("asking the controllers for the cluster id: %w", err)
		log.Error("the controllers do not tell the cluster id; "+hint, "error", err, "retry_in", backoff)
		waiting(err)
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(backoff):
		}
	}
}

// connectNATS connects to KRAFTWATCH_NATS_URL, or starts an embedded NATS server with
// JetStream when it is empty. The returned function drains the connection and stops an
// embedded server.
func connectNATS(cfg config, log *slog.Logger) (*nats.Conn, func(), error) {
	var embedded *server.Server
	url := cfg.NATSURL
	if url == "" {
		dir := cfg.EmbeddedNATSDir
		if dir == "" {
			var err error
			if dir, err = os.MkdirTemp("", "kraftwatch-nats-"); err != nil {
				return nil, nil, err
			}
		}
		s, err := server.NewServer(&server.Options{
			ServerName: "kraftwatch-embedded", Host: "127.0.0.1", Port: cfg.EmbeddedNATSPort, JetStream: true, StoreDir: dir, NoSigs: true,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("embedded NATS: %w", err)
		}
		s.Start()
		if !s.ReadyForConnections(10 * time.Second) {
			s.Shutdown()
			return nil, nil, fmt.Errorf("embedded NATS: not ready after 10s (is port %d taken? set KRAFTWATCH_NATS_URL)", cfg.EmbeddedNATSPort)
		}
		embedded, url = s, s.ClientURL()
		log.Info("started embedded NATS server with JetStream", "url", url, "store_dir", dir)
	}
	opts := []nats.Option{
		nats.Name("kraftwatch"), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("NATS disconnected", "error", err) }),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("NATS reconnected", "url", c.ConnectedUrlRedacted()) }),
		nats.RetryOnFailedConnect(true),
	}
	if cfg.NATSCredsFile != "" {
		opts = append(opts, nats.UserCredentials(cfg.NATSCredsFile))
	}
	if cfg.NATSUser != "" {
		opts = append(opts, nats.UserInfo(cfg.NATSUser, cfg.NATSPassword))
	}
	if cfg.NATSToken != "" {
		opts = append(opts, nats.Token(cfg.NATSToken))
	}
	if cfg.NATSTLSCAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.NATSTLSCAFile))
	}
	if cfg.NATSTLSCertFile != "" {
		opts = append(opts, nats.ClientCert(cfg.NATSTLSCertFile, cfg.NATSTLSKeyFile))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		if embedded != nil {
			embedded.Shutdown()
		}
		return nil, nil, fmt.Errorf("NATS %s: %w", url, err)
	}
	return nc, func() {
		if err := nc.Drain(); err != nil {
			nc.Close()
		}
		for nc.IsDraining() {
			time.Sleep(10 * time.Millisecond)
		}
		if embedded != nil {
			embedded.Shutdown()
			embedded.WaitForShutdown()
		}
	}, nil
}

// problem is one reason /readyz gives for not being ready.
type problem struct {
	Component string `json:"component"` // kraftwatch, metadata, groups, nats or engine
	Reason    string `json:"reason"`
}

// notReady is the error of a readiness check: every problem found.
type notReady []problem

func (n notReady) Error() string {
	var b strings.Builder
	for i, p := range n {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Component + ": " + p.Reason)
	}
	return b.String()
}

// readyzBody is /readyz's JSON answer.
type readyzBody struct {
	Status   string    `json:"status"` // ready or not ready
	Problems []problem `json:"problems,omitempty"`
}

// httpHandler serves /livez (the process answers), /readyz (200 when ready() is nil,
// else 503 listing its problems: a notReady, or any other error as one problem; a JSON
// body either way), /metrics and, when groups is not nil, the group state API (/v1/).
func httpHandler(ready func() error, reg *prometheus.Registry, groups api.Source) http.Handler {
	mux := http.NewServeMux()
	if groups != nil {
		api.Register(mux, groups)
	}
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		body := readyzBody{Status: "ready"}
		w.Header().Set("Content-Type", "application/json")
		if err := ready(); err != nil {
			var nr notReady
			if !errors.As(err, &nr) {
				nr = notReady{{Component: "kraftwatch", Reason: err.Error()}}
			}
			body.Status, body.Problems = "not ready", nr
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(body)
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}

// newHealthRegistry is the registry /metrics serves from the start: the Go and process
// collectors and kraftwatch_ready, which asks ready, the function /readyz asks.
func newHealthRegistry(ready func() error) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kraftwatch", Name: "ready",
		Help: "1 when /readyz answers 200 (0 from the start of the process until then)."}, func() float64 {
		if ready() == nil {
			return 1
		}
		return 0
	}))
	return reg
}

// registerStages adds the stages' counters to reg, and kraftwatch_info with the labels
// info (version, cluster id, metadata source, hash scheme). Every metric reads the
// stage's own counters at scrape time.
func registerStages(reg *prometheus.Registry, info []string, obs *observer.Observer, reader *groups.Reader, pub *publish.Publisher, eng *engine.Engine) {
	counter := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "kraftwatch", Name: name, Help: help}, f))
	}
	gauge := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kraftwatch", Name: name, Help: help}, f))
	}
	m := obs.Metrics()
	counter("metadata_records_replayed_total", "Metadata log records replayed (log and snapshots).",
		func() float64 { return float64(m.Records.Load() + m.SnapshotRecords.Load()) })
	counter("metadata_batches_total", "Metadata log batches read.", func() float64 { return float64(m.Batches.Load()) })
	counter("metadata_catchup_updates_total", "Images published for a run of metadata log batches at once, while catching up on a backlog of at least 1 MiB.",
		func() float64 { return float64(m.CatchUpUpdates.Load()) })
	counter("metadata_snapshots_loaded_total", "Snapshots loaded.", func() float64 { return float64(m.SnapshotsLoaded.Load()) })
	counter("metadata_resets_total", "Rebuilds from a snapshot after truncation.", func() float64 { return float64(m.Resets.Load()) })
	counter("metadata_decode_errors_skipped_total", "Metadata records skipped: unknown type or version, or corrupt.",
		func() float64 { return float64(m.UnknownRecords.Load() + m.CorruptRecords.Load()) })
	counter("metadata_corrupt_batches_total", "Corrupt batches met in the middle of the log (retried).",
		func() float64 { return float64(m.CorruptBatches.Load()) })
	counter("metadata_errors_total", "Failed reads of the metadata log, or failed requests to the controllers (retried with backoff).",
		func() float64 { return float64(m.Errors.Load()) })
	counter("metadata_fetch_requests_total", "Fetch and FetchSnapshot requests sent to the controllers (network mode).",
		func() float64 { return float64(m.FetchRequests.Load()) })
	counter("metadata_leader_changes_total", "Quorum leaders or leader epochs followed (network mode).",
		func() float64 { return float64(m.LeaderChanges.Load()) })
	counter("metadata_authorization_failures_total", "Requests the controllers refused with CLUSTER_AUTHORIZATION_FAILED (network mode; needs ClusterAction on the cluster).",
		func() float64 { return float64(m.AuthorizationFailures.Load()) })
	counter("metadata_truncations_total", "Fetched records past the high watermark dropped after the leader's log diverged (network mode).",
		func() float64 { return float64(m.Truncations.Load()) })
	counter("metadata_snapshot_bytes_fetched_total", "Snapshot bytes fetched from the quorum leader (network mode).",
		func() float64 { return float64(m.SnapshotBytes.Load()) })
	gauge("metadata_leader_id", "Node id of the quorum leader followed; -1 when not known or in disk mode.",
		func() float64 { return float64(m.LeaderID.Load()) })
	gauge("metadata_high_watermark", "High watermark of the metadata log last reported by the leader; -1 in disk mode.",
		func() float64 { return float64(m.HighWatermark.Load()) })
	gauge("metadata_uncommitted_bytes", "Bytes fetched past the high watermark, not applied until it moves (network mode).",
		func() float64 { return float64(m.Uncommitted.Load()) })
	counter("metadata_uncommitted_full_total", "Times the bytes fetched past the high watermark reached KRAFTWATCH_CONTROLLER_MAX_UNCOMMITTED_BYTES, so that no more were taken until the quorum committed (network mode).",
		func() float64 { return float64(m.UncommittedFull.Load()) })
	gauge("metadata_offset", "Offset of the last metadata record applied.", func() float64 { return float64(m.Offset.Load()) })
	gauge("metadata_epoch", "Leader epoch of the last metadata batch applied.", func() float64 { return float64(m.Epoch.Load()) })
	gauge("metadata_lag_seconds", "Age of the last metadata batch applied (now minus its append time).", func() float64 {
		ts := m.Timestamp.Load()
		if ts < 0 {
			return 0
		}
		return time.Since(time.UnixMilli(ts)).Seconds()
	})
	counter("group_records_total", "__consumer_offsets records read.", func() float64 { return float64(reader.Records()) })
	counter("group_reader_retries_total", "__consumer_offsets partition readers rebuilt after an error.",
		func() float64 { return float64(reader.Retries()) })
	gauge("group_records_lag", "__consumer_offsets records not yet read (end offsets are read again every 10 s while a partition cannot be fetched).",
		func() float64 { return float64(reader.Lag()) })
	gauge("group_partitions_stalled", "__consumer_offsets partitions whose reads have failed for over KRAFTWATCH_STALL_AFTER (/readyz fails).",
		func() float64 { return float64(reader.Stalled()) })
	counter("group_decode_errors_skipped_total", "__consumer_offsets records skipped: unknown type or version, or corrupt.",
		func() float64 { return float64(eng.Stats().DecodeErrors) })
	gauge("hash_coordinator_checked", "Groups whose kafka-scheme hash the last check compared with the coordinator's stored MetadataHash (groups with members and a stored hash).",
		func() float64 { return float64(eng.Stats().CoordinatorChecked) })
	gauge("hash_coordinator_mismatches", "Groups whose kafka-scheme hash has differed from the coordinator's stored MetadataHash for over KRAFTWATCH_COORDINATOR_MISMATCH_AFTER.",
		func() float64 { return float64(eng.Stats().CoordinatorMismatches) })
	gauge("groups_tracked", "Groups known from __consumer_offsets.", func() float64 { return float64(eng.Stats().Groups) })
	counter("hash_cache_hits_total", "Topic hash cache hits.", func() float64 { return float64(eng.Stats().Cache.Hits) })
	counter("hash_cache_misses_total", "Topic hash cache misses (hash computed).", func() float64 { return float64(eng.Stats().Cache.Misses) })
	counter("hash_cache_invalidations_total", "Topic hash cache entries dropped by deltas.",
		func() float64 { return float64(eng.Stats().Cache.Invalidations) })
	counter("decisions_total", "Groups whose hash changed (rebalance needed).", func() float64 { return float64(eng.Stats().Decisions) })
	reg.MustRegister(labeled{
		desc: prometheus.NewDesc("kraftwatch_decision_reasons_total",
			"Decisions by the kind of their reasons; a decision counts once under each kind it gives.", []string{"reason"}, nil),
		kind: prometheus.CounterValue,
		values: func(yield func(float64, ...string)) {
			for k, n := range eng.Stats().DecisionReasons {
				yield(float64(n), events.ReasonKind(k).String())
			}
		},
	})
	ps := func(f func(publish.Stats) uint64) func() float64 {
		return func() float64 { return float64(f(pub.Stats())) }
	}
	counter("events_published_total", "Events stored in JetStream (or sent on core NATS).", ps(func(s publish.Stats) uint64 { return s.Published }))
	counter("events_already_published_total", "Events found already published (another replica, or before a restart).",
		ps(func(s publish.Stats) uint64 { return s.AlreadyPublished }))
	counter("events_failed_total", "Failed publish attempts (retried).", ps(func(s publish.Stats) uint64 { return s.Failed }))
	counter("events_retried_total", "Publish attempts retried.", ps(func(s publish.Stats) uint64 { return s.Retried }))
	counter("events_dropped_total", "Events given up (permanent error or drain timeout); each is logged.",
		ps(func(s publish.Stats) uint64 { return s.Dropped }))
	gauge("events_queued", "Events waiting to be published.", func() float64 { return float64(pub.Stats().Queued) })
	reg.MustRegister(labeled{
		desc: prometheus.NewDesc("kraftwatch_info", "Always 1; its labels say what this kraftwatch runs and follows (metadata_source: disk or controllers).",
			[]string{"version", "cluster_id", "metadata_source", "hash_scheme"}, nil),
		kind:   prometheus.GaugeValue,
		values: func(yield func(float64, ...string)) { yield(1, info...) },
	})
}

// labeled exports the series of one metric with labels, read from values at each scrape
// (prometheus has CounterFunc and GaugeFunc, but none with labels).
type labeled struct {
	desc   *prometheus.Desc
	kind   prometheus.ValueType
	values func(yield func(v float64, labels ...string))
}

func (l labeled) Describe(ch chan<- *prometheus.Desc) { ch <- l.desc }

func (l labeled) Collect(ch chan<- prometheus.Metric) {
	l.values(func(v float64, labels ...string) { ch <- prometheus.MustNewConstMetric(l.desc, l.kind, v, labels...) })
}
