package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/caarlos0/env/v11"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/kafkaconn"
	"github.com/kraftwatch/kraftwatch/observer"
	"github.com/kraftwatch/kraftwatch/publish"
)

// envPrefix prefixes every setting's environment variable.
const envPrefix = "KRAFTWATCH_"

// config is every setting of `kraftwatch run`, read from KRAFTWATCH_* environment
// variables. The desc tags are what --help prints.
type config struct {
	MetadataLogDir             string `env:"METADATA_LOG_DIR" desc:"Kafka's metadata.log.dir (or its __cluster_metadata-0 directory), mounted read-only; set it or CONTROLLER_BOOTSTRAP_SERVERS"`
	ControllerBootstrapServers string `env:"CONTROLLER_BOOTSTRAP_SERVERS" desc:"KRaft controller listeners (host:port, comma-separated, as controller.quorum.bootstrap.servers): follow the metadata log from the quorum leader over the network, as a Raft observer, instead of reading METADATA_LOG_DIR; needs ClusterAction on the cluster"`
	BootstrapServers           string `env:"BOOTSTRAP_SERVERS" desc:"Kafka bootstrap servers, comma-separated, for reading __consumer_offsets"`
	ClusterID                  string `env:"CLUSTER_ID" desc:"Kafka cluster id; empty reads it from meta.properties beside the metadata log, or in network mode from the brokers' Metadata answer; network mode confirms it with the controllers (a Fetch carrying it) before touching NATS"`

	Kafka                    kafkaconn.Config `envPrefix:"KAFKA_"`
	Controller               kafkaconn.Config `envPrefix:"CONTROLLER_"`
	QuorumRequestTimeout     string           `env:"QUORUM_REQUEST_TIMEOUT" envDefault:"2s" desc:"network mode: how long a controller may take to answer a request beyond the Fetch long poll (500ms) before kraftwatch asks another controller for the leader, as Kafka's controller.quorum.request.timeout.ms (default 2000 ms) does for its observers: a hung quorum leader is left within about twice this (Go duration)"`
	ControllerMaxUncommitted int64            `env:"CONTROLLER_MAX_UNCOMMITTED_BYTES" envDefault:"33554432" desc:"network mode: most bytes of fetched records kept past the high watermark, waiting for the quorum to commit them; at the bound kraftwatch takes no more (it asks only for the high watermark) until the quorum commits"`
	NATSURL                  string           `env:"NATS_URL" desc:"NATS server URLs, comma-separated; empty starts an embedded NATS server with JetStream"`
	NATSCredsFile            string           `env:"NATS_CREDS_FILE" desc:"NATS credentials file (JWT + nkey)"`
	NATSUser                 string           `env:"NATS_USER" desc:"NATS user name"`
	NATSPassword             string           `env:"NATS_PASSWORD" desc:"NATS password"`
	NATSToken                string           `env:"NATS_TOKEN" desc:"NATS token"`
	NATSTLSCAFile            string           `env:"NATS_TLS_CA_FILE" desc:"PEM CA bundle for NATS's certificates"`
	NATSTLSCertFile          string           `env:"NATS_TLS_CERT_FILE" desc:"PEM client certificate for NATS"`
	NATSTLSKeyFile           string           `env:"NATS_TLS_KEY_FILE" desc:"PEM client key for NATS"`
	NATSPingInterval         string           `env:"NATS_PING_INTERVAL" envDefault:"5s" desc:"how often kraftwatch pings its NATS server (Go duration); a server that misses NATS_MAX_PINGS_OUT pings in a row is left for another node of the cluster within NATS_PING_INTERVAL × (NATS_MAX_PINGS_OUT+1)"`
	NATSMaxPingsOut          int              `env:"NATS_MAX_PINGS_OUT" envDefault:"2" desc:"unanswered pings after which the NATS server counts as hung (see NATS_PING_INTERVAL)"`
	NATSMode                 string           `env:"NATS_MODE" envDefault:"jetstream" desc:"jetstream (durable, deduplicated) or core (plain publish, no replay after restart)"`
	EmbeddedNATSPort         int              `env:"EMBEDDED_NATS_PORT" envDefault:"4222" desc:"port of the embedded NATS server (127.0.0.1)"`
	EmbeddedNATSDir          string           `env:"EMBEDDED_NATS_DIR" desc:"JetStream store of the embedded NATS server; empty uses a temporary directory"`
	SubjectPrefix            string           `env:"SUBJECT_PREFIX" envDefault:"kraftwatch" desc:"first token(s) of every subject"`
	StreamName               string           `env:"STREAM_NAME" desc:"JetStream stream; empty means KRAFTWATCH_<cluster id>"`
	EventsStream             string           `env:"EVENTS_STREAM" desc:"JetStream stream for subscribers, capturing the public subjects and sourcing STREAM_NAME's; empty means <STREAM_NAME>_EVENTS; none runs without it, for throughput (nats-server stores each event once: README, Events): subscribers read STREAM_NAME or the core subjects, and no stream is found by subject"`
	StreamReplicas           int              `env:"STREAM_REPLICAS" envDefault:"1" desc:"replicas of the stream when kraftwatch creates it"`
	StreamMaxAge             string           `env:"STREAM_MAX_AGE" envDefault:"0s" desc:"drop events older than this (Go duration); 0 keeps them"`
	StreamMaxMsgsPerSubject  int64            `env:"STREAM_MAX_MSGS_PER_SUBJECT" envDefault:"16" desc:"events kept per group; the last one is the record of its last announced hash"`
	HashScheme               string           `env:"HASH_SCHEME" envDefault:"murmur3" desc:"murmur3 or kafka (bit-exact Kafka MetadataHash)"`
	GroupInclude             string           `env:"GROUP_INCLUDE" envDefault:".*" desc:"announce only groups whose id fully matches this regex (RE2)"`
	GroupExclude             string           `env:"GROUP_EXCLUDE" desc:"never announce groups whose id fully matches this regex (RE2)"`
	GroupMetrics             string           `env:"GROUP_METRICS" desc:"export per-group series (kraftwatch_group_*) for groups whose id fully matches this regex (RE2); empty exports none"`
	RebalancedEvents         bool             `env:"REBALANCED_EVENTS" envDefault:"false" desc:"also publish a kraftwatch.group.rebalanced.v1 event for every group epoch (Kafka 4.3+: every new target assignment) the coordinator writes, with its causes, on <prefix>.<cluster token>.rebalanced.<group type>.<group token>; kraftwatch_group_rebalances_total counts them either way"`
	StallAfter               string           `env:"STALL_AFTER" envDefault:"30s" desc:"how long the metadata source or a __consumer_offsets partition may stay unreadable before /readyz fails (Go duration)"`
	MismatchAfter            string           `env:"COORDINATOR_MISMATCH_AFTER" envDefault:"2m" desc:"how long the kafka-scheme hash of a group with members may differ from its coordinator's stored MetadataHash before it counts in kraftwatch_hash_coordinator_mismatches (Go duration)"`
	HTTPAddr                 string           `env:"HTTP_ADDR" envDefault:":8080" desc:"listen address of /livez, /readyz and /metrics"`
	PprofAddr                string           `env:"PPROF_ADDR" desc:"listen address of Go's profiling endpoints (/debug/pprof/), on a listener of their own; empty (the default) serves none. Profiles reveal internals: bind it to localhost or a private network"`
	LogLevel                 string           `env:"LOG_LEVEL" envDefault:"info" desc:"debug, info, warn or error"`
	LogFormat                string           `env:"LOG_FORMAT" envDefault:"json" desc:"json or text"`
}

// noEventsStream is the EVENTS_STREAM value that runs without the events stream
// (publish.Config.NoEventsStream).
const noEventsStream = "none"

// loadConfig reads the environment. A KRAFTWATCH_ variable that is no setting (a typo)
// gets an error naming it and the closest setting. A value that is not of its
// setting's type (a bool that is not a bool) gets an error naming the variable, and
// the setting keeps its default so that the rest is read and validate can report every
// other problem too; meaning is checked by validate.
func loadConfig(environ []string) (config, error) {
	var c config
	vars := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	var errs []error
	known := map[string]bool{}
	var names []string
	for _, f := range fields() {
		known[f.name] = true
		names = append(names, f.name)
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		if strings.HasPrefix(k, envPrefix) && !known[k] {
			errs = append(errs, fmt.Errorf("%s: not a setting of kraftwatch run; did you mean %s?", k, closest(k, names)))
		}
	}
	for _, f := range fields() {
		v, ok := vars[f.name]
		if !ok || v == "" {
			continue
		}
		var err error
		switch f.kind {
		case reflect.Bool:
			_, err = strconv.ParseBool(v)
		case reflect.Int, reflect.Int64:
			_, err = strconv.ParseInt(v, 10, 64)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not %s", f.name, v, map[reflect.Kind]string{
				reflect.Bool: "true or false", reflect.Int: "an integer", reflect.Int64: "an integer"}[f.kind]))
			delete(vars, f.name)
		}
	}
	if err := env.ParseWithOptions(&c, env.Options{Prefix: envPrefix, Environment: vars}); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

// runConfig is config once validated: every value parsed
// into its type, so that nothing after validate parses or checks a setting again.
type runConfig struct {
	// metadataDir is the __cluster_metadata-0 directory in disk mode; empty in network
	// mode (controllers set).
	metadataDir string
	// controllers are the controller listeners, host:port, in network mode.
	controllers []string
	// brokers are the bootstrap servers of __consumer_offsets, host:port.
	brokers []string
	// clusterID is KRAFTWATCH_CLUSTER_ID; empty reads it from meta.properties (disk
	// mode) or asks the controllers (network mode).
	clusterID             string
	kafka, controller     *kafkaconn.Security // brokers', the controller listener's
	controllerUncommitted int64
	quorumRequestTimeout  time.Duration
	nats                  natsSettings
	// publish is the publisher's config but for Conn, ClusterID and Logger, which run
	// sets.
	publish           publish.Config
	stallAfter        time.Duration
	mismatchAfter     time.Duration
	include           *regexp.Regexp // full matches, as every group regexp
	exclude, perGroup *regexp.Regexp // nil: none
	rebalanced        bool
	httpAddr          string
	pprofAddr         string // empty: no profiling endpoint
	logLevel          slog.Level
	logText           bool
}

// natsSettings is how kraftwatch connects to NATS.
type natsSettings struct {
	url          string // comma-separated server URLs; empty starts an embedded server
	embeddedPort int
	embeddedDir  string        // empty: a temporary directory
	opts         []nats.Option // credentials, TLS and keepalive
}

// validate checks every setting and returns them typed, or one error per bad setting,
// naming its variable.
func (c config) validate() (runConfig, error) {
	var s runConfig
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s%s: %s", envPrefix, field, fmt.Sprintf(format, args...)))
	}
	switch {
	case c.MetadataLogDir == "" && c.ControllerBootstrapServers == "":
		bad("METADATA_LOG_DIR", "required: Kafka's metadata.log.dir, or set %sCONTROLLER_BOOTSTRAP_SERVERS instead", envPrefix)
	case c.MetadataLogDir != "" && c.ControllerBootstrapServers != "":
		bad("CONTROLLER_BOOTSTRAP_SERVERS", "set either it or %sMETADATA_LOG_DIR, not both", envPrefix)
	case c.MetadataLogDir != "":
		s.metadataDir = observer.PartitionDir(c.MetadataLogDir)
		if err := readableDir(c.MetadataLogDir); err != nil {
			bad("METADATA_LOG_DIR", "%v", err)
		} else if err := readableDir(s.metadataDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			bad("METADATA_LOG_DIR", "%v", err)
		}
	}
	s.controllers = kafkaconn.SplitHosts(c.ControllerBootstrapServers)
	for _, addr := range s.controllers {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			bad("CONTROLLER_BOOTSTRAP_SERVERS", "%q is not host:port", addr)
		}
	}
	if c.ControllerBootstrapServers != "" && len(s.controllers) == 0 {
		bad("CONTROLLER_BOOTSTRAP_SERVERS", "no host:port in %q", c.ControllerBootstrapServers)
	}
	s.controllerUncommitted = c.ControllerMaxUncommitted
	if c.ControllerMaxUncommitted < 1 {
		bad("CONTROLLER_MAX_UNCOMMITTED_BYTES", "%d: at least 1 (a batch is always kept, whatever its size)", c.ControllerMaxUncommitted)
	}
	s.brokers = kafkaconn.SplitHosts(c.BootstrapServers)
	if c.BootstrapServers == "" {
		bad("BOOTSTRAP_SERVERS", "required: host:port of at least one broker")
	}
	for _, addr := range s.brokers {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			bad("BOOTSTRAP_SERVERS", "%q is not host:port", addr)
		}
	}
	s.clusterID = c.ClusterID
	for _, conn := range []struct {
		prefix string
		cfg    kafkaconn.Config
		to     **kafkaconn.Security
	}{{"KAFKA_", c.Kafka, &s.kafka}, {"CONTROLLER_", c.Controller, &s.controller}} {
		var err error
		*conn.to, err = conn.cfg.Security()
		for _, e := range splitErrors(err) {
			var kerr *kafkaconn.FieldError
			if errors.As(e, &kerr) {
				bad(conn.prefix+kerr.Field, "%s", strings.ReplaceAll(kerr.Msg, "KAFKA_", conn.prefix))
			} else {
				bad(conn.prefix+"*", "%v", e)
			}
		}
	}

	s.nats = natsSettings{url: c.NATSURL, embeddedPort: c.EmbeddedNATSPort, embeddedDir: c.EmbeddedNATSDir}
	s.nats.opts = c.natsOptions(bad)
	if c.EmbeddedNATSDir != "" && c.NATSURL == "" {
		if err := writableDir(c.EmbeddedNATSDir); err != nil {
			bad("EMBEDDED_NATS_DIR", "%v", err)
		}
	}
	if c.EmbeddedNATSPort < 1 || c.EmbeddedNATSPort > 65535 {
		bad("EMBEDDED_NATS_PORT", "%d is not a TCP port", c.EmbeddedNATSPort)
	}

	p := &s.publish
	p.Prefix, p.HashScheme, p.Stream = c.SubjectPrefix, c.HashScheme, c.StreamName
	p.Replicas, p.MaxMsgsPerSubject = c.StreamReplicas, c.StreamMaxMsgsPerSubject
	var err error
	if p.Mode, err = publish.ParseMode(c.NATSMode); err != nil {
		bad("NATS_MODE", "%q is not jetstream or core", c.NATSMode)
	}
	if first, _, _ := strings.Cut(c.SubjectPrefix, "."); !events.ValidPrefix(c.SubjectPrefix) {
		bad("SUBJECT_PREFIX", "%q is not tokens of A-Z a-z 0-9 - _ separated by '.'", c.SubjectPrefix)
	} else if first == events.InternalPrefix && p.Mode != publish.ModeCore {
		bad("SUBJECT_PREFIX", "%q: its first token %s is kept for the subjects kraftwatch publishes to before the stream stores them",
			c.SubjectPrefix, events.InternalPrefix)
	}
	if c.StreamName != "" && !validStreamName(c.StreamName) {
		bad("STREAM_NAME", "%q is not a stream name of A-Z a-z 0-9 - _", c.StreamName)
	}
	switch {
	case c.EventsStream == noEventsStream:
		p.NoEventsStream = true
	case c.EventsStream != "" && !validStreamName(c.EventsStream):
		bad("EVENTS_STREAM", "%q is not none or a stream name of A-Z a-z 0-9 - _", c.EventsStream)
	case c.EventsStream != "" && c.EventsStream == c.StreamName:
		bad("EVENTS_STREAM", "%q is STREAM_NAME too", c.EventsStream)
	default:
		p.EventsStream = c.EventsStream
	}
	if c.StreamReplicas < 1 || c.StreamReplicas > 5 {
		bad("STREAM_REPLICAS", "%d is not between 1 and 5", c.StreamReplicas)
	}
	if p.MaxAge, err = time.ParseDuration(c.StreamMaxAge); err != nil || p.MaxAge < 0 {
		bad("STREAM_MAX_AGE", "%q is not a non-negative Go duration such as 168h", c.StreamMaxAge)
	}
	if c.StreamMaxMsgsPerSubject == 0 || c.StreamMaxMsgsPerSubject < -1 {
		bad("STREAM_MAX_MSGS_PER_SUBJECT", "%d: want -1 (no limit) or at least 1", c.StreamMaxMsgsPerSubject)
	}
	if _, err := hashcache.NewScheme(c.HashScheme); err != nil {
		bad("HASH_SCHEME", "%q is not murmur3 or kafka", c.HashScheme)
	}

	if s.quorumRequestTimeout, err = time.ParseDuration(c.QuorumRequestTimeout); err != nil || s.quorumRequestTimeout <= 0 {
		bad("QUORUM_REQUEST_TIMEOUT", "%q is not a positive Go duration such as 2s", c.QuorumRequestTimeout)
	}
	if s.stallAfter, err = time.ParseDuration(c.StallAfter); err != nil || s.stallAfter <= 0 {
		bad("STALL_AFTER", "%q is not a positive Go duration such as 30s", c.StallAfter)
	}
	if s.mismatchAfter, err = time.ParseDuration(c.MismatchAfter); err != nil || s.mismatchAfter <= 0 {
		bad("COORDINATOR_MISMATCH_AFTER", "%q is not a positive Go duration such as 2m", c.MismatchAfter)
	}
	for _, re := range []struct {
		field, expr string
		to          **regexp.Regexp
	}{{"GROUP_INCLUDE", c.GroupInclude, &s.include}, {"GROUP_EXCLUDE", c.GroupExclude, &s.exclude},
		{"GROUP_METRICS", c.GroupMetrics, &s.perGroup}} {
		if re.expr == "" && re.field != "GROUP_INCLUDE" {
			continue // none
		}
		// Alone first: "a)(b" is valid only once wrapped.
		if _, err := regexp.Compile(re.expr); err != nil {
			bad(re.field, "%v", err)
		} else if *re.to, err = regexp.Compile("^(?:" + re.expr + ")$"); err != nil {
			bad(re.field, "%v", err)
		}
	}
	s.rebalanced = c.RebalancedEvents

	s.httpAddr, s.pprofAddr = c.HTTPAddr, c.PprofAddr
	for _, a := range []struct{ field, addr string }{{"HTTP_ADDR", c.HTTPAddr}, {"PPROF_ADDR", c.PprofAddr}} {
		if a.addr == "" && a.field == "PPROF_ADDR" {
			continue // off
		}
		if _, port, err := net.SplitHostPort(a.addr); err != nil {
			bad(a.field, "%q is not host:port", a.addr)
		} else if _, err := strconv.ParseUint(port, 10, 16); port != "" && err != nil {
			bad(a.field, "%q: port %q is not a TCP port", a.addr, port)
		}
	}
	if err := s.logLevel.UnmarshalText([]byte(c.LogLevel)); err != nil {
		bad("LOG_LEVEL", "%q is not debug, info, warn or error", c.LogLevel)
	}
	switch c.LogFormat {
	case "json":
	case "text":
		s.logText = true
	default:
		bad("LOG_FORMAT", "%q is not json or text", c.LogFormat)
	}
	if len(errs) > 0 {
		return runConfig{}, errors.Join(errs...)
	}
	return s, nil
}

// validStreamName reports whether name is a JetStream stream name kraftwatch accepts:
// A-Z a-z 0-9 - _ (a subject token: no '.', '*', '>' or space).
func validStreamName(name string) bool {
	return events.ValidPrefix(name) && !strings.Contains(name, ".")
}

// natsOptions checks the settings of the NATS connection that `run` and `watch` share
// (credentials, TLS, URLs, keepalive), reporting each bad one to bad, and returns the
// nats.go options they make.
func (c config) natsOptions(bad func(field, format string, args ...any)) []nats.Option {
	var opts []nats.Option
	if (c.NATSTLSCertFile == "") != (c.NATSTLSKeyFile == "") {
		bad("NATS_TLS_CERT_FILE", "NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together")
	}
	if c.NATSCredsFile != "" {
		if err := checkCredsFile(c.NATSCredsFile); err != nil {
			bad("NATS_CREDS_FILE", "%v", err)
		}
	}
	if c.NATSTLSCAFile != "" {
		if _, err := kafkaconn.ReadCAFile(c.NATSTLSCAFile); err != nil {
			bad("NATS_TLS_CA_FILE", "%v", err)
		}
	}
	var kerr *kafkaconn.FieldError
	for _, e := range splitErrors(kafkaconn.CheckKeyPair(c.NATSTLSCertFile, c.NATSTLSKeyFile)) {
		if errors.As(e, &kerr) {
			bad("NATS_TLS_"+kerr.Field, "%s", strings.ReplaceAll(kerr.Msg, "TLS_KEY_FILE", envPrefix+"NATS_TLS_KEY_FILE"))
		}
	}
	if c.NATSCredsFile != "" {
		opts = append(opts, nats.UserCredentials(c.NATSCredsFile))
	}
	if c.NATSUser != "" {
		opts = append(opts, nats.UserInfo(c.NATSUser, c.NATSPassword))
	}
	if c.NATSToken != "" {
		opts = append(opts, nats.Token(c.NATSToken))
	}
	if c.NATSTLSCAFile != "" {
		opts = append(opts, nats.RootCAs(c.NATSTLSCAFile))
	}
	if c.NATSTLSCertFile != "" {
		opts = append(opts, nats.ClientCert(c.NATSTLSCertFile, c.NATSTLSKeyFile))
	}
	for _, u := range kafkaconn.SplitHosts(c.NATSURL) {
		if err := checkNATSURL(u); err != nil {
			bad("NATS_URL", "%v", err)
		}
	}
	ping, err := time.ParseDuration(c.NATSPingInterval)
	if err != nil || ping <= 0 {
		bad("NATS_PING_INTERVAL", "%q is not a positive Go duration (e.g. 5s)", c.NATSPingInterval)
	}
	if c.NATSMaxPingsOut < 1 {
		bad("NATS_MAX_PINGS_OUT", "%d: at least 1", c.NATSMaxPingsOut)
	}
	return append(opts, nats.PingInterval(ping), nats.MaxPingsOutstanding(c.NATSMaxPingsOut))
}

// natsOptionsFromEnv are the nats.go options of the NATS settings in environ (natsOptions),
// for `kraftwatch watch`; an error names each bad setting.
func natsOptionsFromEnv(environ []string) ([]nats.Option, error) {
	c, err := loadConfig(environ)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	opts := c.natsOptions(func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s%s: %s", envPrefix, field, fmt.Sprintf(format, args...)))
	})
	return opts, errors.Join(errs...)
}

// checkCredsFile checks that path is a NATS credentials file: a user JWT, whose
// claims decode and whose signature verifies, and a user nkey seed.
func checkCredsFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	token, err := nkeys.ParseDecoratedJWT(b)
	if err == nil {
		_, err = jwt.DecodeUserClaims(token)
	}
	if err != nil {
		return fmt.Errorf("%s holds no valid user JWT: %v", path, err)
	}
	if _, err := nkeys.ParseDecoratedUserNKey(b); err != nil {
		return fmt.Errorf("%s holds no user nkey seed: %v", path, err)
	}
	return nil
}

// closest is the name in names nearest to name (the fewest single-character edits,
// a swap of neighbours counting as one), the first of equals.
func closest(name string, names []string) string {
	best, bestD := "", -1
	for _, n := range names {
		if d := editDistance(name, n); bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b: insertions,
// deletions, substitutions and transpositions of adjacent bytes.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// readableDir checks that dir is a directory this process can list.
func readableDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.Open(dir)
	if err == nil {
		_, err = f.Readdirnames(1)
		f.Close()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s cannot be read: %w", dir, err)
	}
	return nil
}

// writableDir checks that dir exists, or can be created, and that this process can
// create files in it.
func writableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".kraftwatch-check-*")
	if err != nil {
		return fmt.Errorf("%s is not writable: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// checkNATSURL accepts what nats.go connects to: nats://, tls://, ws:// or wss:// with
// a host, or a bare host:port (nats.go adds nats://).
func checkNATSURL(s string) error {
	if !strings.Contains(s, "://") {
		if _, port, err := net.SplitHostPort(s); err != nil || strings.Contains(s, "/") || port == "" {
			return fmt.Errorf("%q is not a NATS URL (nats://host:port)", s)
		}
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a NATS URL: %v", s, err)
	}
	switch u.Scheme {
	case "nats", "tls", "ws", "wss":
	default:
		return fmt.Errorf("%q: scheme %q is not nats, tls, ws or wss", s, u.Scheme)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%q has no host", s)
	}
	return nil
}

// networkMode reports whether the metadata log is followed from the controllers.
func (s runConfig) networkMode() bool { return len(s.controllers) > 0 }

// metadataSource names where the metadata log is read from, for logs.
func (s runConfig) metadataSource() string {
	if s.networkMode() {
		return "controllers " + strings.Join(s.controllers, ",")
	}
	return s.metadataDir
}

// observerConfig is the observer's config, either source; clusterID, when known, makes
// controllers of another cluster refuse the fetches. The caller adds Logger and Handler.
func (s runConfig) observerConfig(clusterID string) observer.Config {
	if !s.networkMode() {
		return observer.Config{Dir: s.metadataDir}
	}
	return observer.Config{
		Controllers:    s.controllers,
		ClientOpts:     s.controller.FranzOpts(),
		Principal:      s.controller.Principal(),
		ClusterID:      clusterID,
		MaxUncommitted: s.controllerUncommitted,
		RequestTimeout: s.quorumRequestTimeout,
	}
}

// readClusterID is KRAFTWATCH_CLUSTER_ID, or cluster.id from meta.properties in
// metadata.log.dir (in network mode run asks the controllers instead: waitClusterID).
func (s runConfig) readClusterID() (string, error) {
	if s.clusterID != "" {
		return s.clusterID, nil
	}
	path := filepath.Join(filepath.Dir(s.metadataDir), "meta.properties")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the cluster id (set %sCLUSTER_ID to skip): %w", envPrefix, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.TrimSpace(k) == "cluster.id" {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("%s has no cluster.id", path)
}

func (s runConfig) logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: s.logLevel}
	if s.logText {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// settings lists every variable with its default and description, in field order
// (a nested struct's fields under its envPrefix).
func settings() [][3]string {
	var out [][3]string
	for _, s := range fields() {
		out = append(out, [3]string{s.name, s.def, s.desc})
	}
	return out
}

// field is one setting: its variable, default, description and Go kind.
type field struct {
	name, def, desc string
	kind            reflect.Kind
}

// fields lists every setting in field order (a nested struct's fields under its
// envPrefix).
func fields() []field { return appendFields(nil, envPrefix, reflect.TypeFor[config]()) }

func appendFields(out []field, prefix string, t reflect.Type) []field {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Struct {
			out = appendFields(out, prefix+f.Tag.Get("envPrefix"), f.Type)
			continue
		}
		desc := f.Tag.Get("desc")
		if strings.HasSuffix(prefix, "CONTROLLER_") {
			desc = controllerDesc.Replace(desc)
		}
		out = append(out, field{prefix + f.Tag.Get("env"), f.Tag.Get("envDefault"), desc, f.Type.Kind()})
	}
	return out
}

// controllerDesc turns kafkaconn.Config's descriptions, written for the brokers
// (KAFKA_*), into those of the controller listener (CONTROLLER_*).
var controllerDesc = strings.NewReplacer("KAFKA_", "CONTROLLER_", "Kafka's", "the controllers'",
	"to Kafka", "to the controller listener", "for Kafka", "for the controller listener")

func printSettings(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIABLE\tDEFAULT\tMEANING")
	for _, s := range settings() {
		def := s[1]
		if def == "" {
			def = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s[0], def, s[2])
	}
	tw.Flush()
}
