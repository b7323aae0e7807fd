package observer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftwatch/kraftwatch/kafkaconn"
)

// The connections of the network source.
//
// One franz-go client per controller address, each with that address as its only
// seed broker, and every request issued to that seed broker directly
// (kgo.Broker.Request: no routing, no retries). kgo does the connection: dial, TLS,
// SASL (PLAIN, SCRAM), ApiVersions and the version of each request, framing,
// timeouts; kmsg the request and response codecs. The observer decides which node to
// ask and what to make of the answer.

// metadataTopicID is the topic id of __cluster_metadata, fixed by Kafka
// (Topic.METADATA_TOPIC_ID = Uuid(0, 1)).
var metadataTopicID = [16]byte{15: 1}

const metadataTopic = "__cluster_metadata"

// conns holds a client per controller address. Not safe for concurrent use.
type conns struct {
	opts    []kgo.Opt
	timeout time.Duration
	clients map[string]*kgo.Client
}

func newConns(cfg *Config) *conns {
	return &conns{opts: cfg.ClientOpts, timeout: cfg.RequestTimeout, clients: map[string]*kgo.Client{}}
}

// request sends req to the controller at addr and returns its response. A failed
// request closes the client, so that the next one dials again.
func (c *conns) request(ctx context.Context, addr string, req kmsg.Request, wait time.Duration) (kmsg.Response, error) {
	cl, ok := c.clients[addr]
	if !ok {
		opts := append([]kgo.Opt{
			kgo.SeedBrokers(addr), kgo.ClientID(kafkaconn.ClientID),
			kgo.DialTimeout(c.timeout), kgo.RequestTimeoutOverhead(c.timeout),
			// No topics, so no metadata is needed; the controllers would not answer it.
			kgo.MetadataMaxAge(time.Hour),
		}, c.opts...)
		var err error
		if cl, err = kgo.NewClient(opts...); err != nil {
			return nil, err
		}
		c.clients[addr] = cl
	}
	seeds := cl.SeedBrokers()
	if len(seeds) != 1 {
		return nil, fmt.Errorf("%d seed brokers for %s", len(seeds), addr)
	}
	// kgo's own read deadline is RequestTimeoutOverhead plus a Fetch's MaxWaitMillis;
	// the context bounds everything else (a dial that hangs, a SASL exchange).
	rctx, cancel := context.WithTimeout(ctx, wait+2*c.timeout)
	defer cancel()
	resp, err := seeds[0].Request(rctx, req)
	if err != nil {
		c.drop(addr)
		if ctx.Err() == nil && rctx.Err() != nil {
			err = fmt.Errorf("no answer within %v: %w", wait+2*c.timeout, err)
		}
		return nil, err
	}
	return resp, nil
}

// drop closes the client of addr.
func (c *conns) drop(addr string) {
	if cl, ok := c.clients[addr]; ok {
		cl.Close()
		delete(c.clients, addr)
	}
}

func (c *conns) close() {
	for addr := range c.clients {
		c.drop(addr)
	}
}

// DescribeCluster asks the controllers in cfg.Controllers, in turn, for the cluster id
// (DescribeCluster is served on the controller listener) and returns the first answer.
func DescribeCluster(ctx context.Context, cfg Config) (string, error) {
	if len(cfg.Controllers) == 0 {
		return "", errors.New("observer: no controllers")
	}
	cfg.withDefaults()
	c := newConns(&cfg)
	defer c.close()
	var errs []error
	for _, addr := range cfg.Controllers {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.EndpointType = 2 // controllers: the only type a controller listener serves
		resp, err := c.request(ctx, addr, req, 0)
		if err == nil {
			r := resp.(*kmsg.DescribeClusterResponse)
			if err = kerr.ErrorForCode(r.ErrorCode); err == nil {
				if r.ClusterID == "" {
					err = fmt.Errorf("empty cluster id: %w", ErrProtocol)
				} else {
					return r.ClusterID, nil
				}
			} else if r.ErrorMessage != nil {
				err = fmt.Errorf("%w: %s", err, *r.ErrorMessage)
			}
		}
		errs = append(errs, &ControllerError{Addr: addr, Node: -1, Request: "DescribeCluster", Offset: -1, Err: err})
		if ctx.Err() != nil {
			break
		}
	}
	return "", errors.Join(errs...)
}

// ConfirmClusterID asks the controllers in cfg.Controllers, in turn, whether they belong
// to cluster cfg.ClusterID: it sends a Fetch carrying that id, which a KRaft controller
// refuses with INCONSISTENT_CLUSTER_ID when its own id differs (and serves otherwise,
// or answers that it does not lead). A Fetch needs only ClusterAction on the cluster,
// what the network source needs anyway; DescribeCluster, the other way to learn the
// id from a controller, needs Alter. It returns nil at the first controller that
// accepts the id; an error wrapping kerr.InconsistentClusterID at the first that
// refuses it; else every controller's error (ErrNotAuthorized for a refusal).
func ConfirmClusterID(ctx context.Context, cfg Config) error {
	if len(cfg.Controllers) == 0 {
		return errors.New("observer: no controllers")
	}
	if cfg.ClusterID == "" {
		return errors.New("observer: no cluster id to confirm")
	}
	cfg.withDefaults()
	c := newConns(&cfg)
	defer c.close()
	var errs []error
	for _, addr := range cfg.Controllers {
		q := &quorum{cfg: &cfg, leader: -1, leaderAddr: addr}
		req := q.fetchRequest(0)
		req.MaxBytes, req.Topics[0].Partitions[0].PartitionMaxBytes = 1, 1
		resp, err := c.request(ctx, addr, req, 0)
		if err == nil {
			r := resp.(*kmsg.FetchResponse)
			if err = q.topError(r.ErrorCode); err == nil {
				return nil // the partition's error, if any, is about leadership: the id is accepted
			}
			if errors.Is(err, kerr.InconsistentClusterID) {
				return &ControllerError{Addr: addr, Node: -1, Request: "Fetch", Offset: 0, Err: err}
			}
		}
		errs = append(errs, &ControllerError{Addr: addr, Node: -1, Request: "Fetch", Offset: 0, Err: err})
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

// GrantCommand is the kafka-acls command that grants cfg.Principal what the network
// source needs, ClusterAction on the cluster, through the controller at addr. When
// the controller listener takes TLS or SASL (cfg.ClientOpts set), kafka-acls must
// connect as an admin the same way: the command has --command-config, to be given
// that admin's client properties (security.protocol, sasl.jaas.config, truststore).
func GrantCommand(cfg *Config, addr string) string {
	principal := cfg.Principal
	if principal == "" {
		principal = "User:ANONYMOUS"
	}
	cmd := "kafka-acls --bootstrap-controller " + addr
	if len(cfg.ClientOpts) > 0 {
		cmd += " --command-config <admin client properties>"
	}
	return cmd + " --add --allow-principal " + principal + " --operation ClusterAction --cluster"
}
