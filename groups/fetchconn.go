package groups

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
	"github.com/segmentio/kafka-go/protocol/saslauthenticate"
	"github.com/segmentio/kafka-go/protocol/saslhandshake"
	"github.com/segmentio/kafka-go/sasl"
)

// fetchConn is a connection to one broker that the Reader dials itself and speaks to
// with kafka-go's protocol package. kafka-go's Transport leaves internal topics out
// of the cluster layout it routes by, so it cannot send a Fetch of __consumer_offsets
// to the partition's leader; and its fetch decoding copies every record, while the
// Reader drops most of them (offset commits) unread. So the Fetch answer is read
// whole into a buffer reused from fetch to fetch (parseFetch), and the rest (API
// versions, SASL, ListOffsets) goes through protocol.Conn.
type fetchConn struct {
	pc       *protocol.Conn
	addr     string
	clientID string
	fetchV   int16
	session  fetchSession // the connection's fetch session
	corr     int32
	buf      []byte // the last Fetch answer; its records are valid until the next fetch
}

// Fetch versions the Reader speaks: 4 brings read_committed, 11 is kafka-go's last
// (12 and later are flexible versions, which it does not encode).
const (
	minFetchVersion = 4
	maxFetchVersion = 11
)

// maxFetchAnswer bounds the size of one Fetch answer the Reader reads: fetchMaxBytes,
// plus a first batch larger than it (Kafka returns one whole), up to Kafka's largest
// message size in practice.
const maxFetchAnswer = fetchMaxBytes + 64<<20

// dialBroker connects to addr with the Dialer's settings (timeout, TLS, SASL, client
// id), asks the broker's API versions and authenticates, all before ctx's deadline.
func dialBroker(ctx context.Context, d *kafka.Dialer, addr string) (*fetchConn, error) {
	nd := net.Dialer{Timeout: d.Timeout, LocalAddr: d.LocalAddr, KeepAlive: d.KeepAlive}
	nc, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c, err := handshake(ctx, d, nc, addr)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	return c, nil
}

func handshake(ctx context.Context, d *kafka.Dialer, nc net.Conn, addr string) (*fetchConn, error) {
	if deadline, ok := ctx.Deadline(); ok {
		nc.SetDeadline(deadline)
	}
	host, port, _ := net.SplitHostPort(addr)
	if d.TLS != nil {
		cfg := d.TLS.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, err
		}
		nc = tc
	}
	c := &fetchConn{pc: protocol.NewConn(nc, d.ClientID), addr: addr, clientID: d.ClientID}
	msg, err := c.pc.RoundTrip(new(apiversions.Request))
	if err != nil {
		return nil, fmt.Errorf("api versions: %w", err)
	}
	res := msg.(*apiversions.Response)
	if res.ErrorCode != 0 {
		return nil, fmt.Errorf("api versions: %w", kafka.Error(res.ErrorCode))
	}
	versions := make(map[protocol.ApiKey]int16, len(res.ApiKeys))
	c.fetchV = -1
	for _, k := range res.ApiKeys {
		key := protocol.ApiKey(k.ApiKey)
		versions[key] = key.SelectVersion(k.MinVersion, k.MaxVersion)
		if key == protocol.Fetch && k.MaxVersion >= minFetchVersion && k.MinVersion <= maxFetchVersion {
			c.fetchV = min(k.MaxVersion, maxFetchVersion)
		}
	}
	if c.fetchV < 0 {
		return nil, fmt.Errorf("the broker speaks no Fetch version from %d to %d", minFetchVersion, maxFetchVersion)
	}
	c.pc.SetVersions(versions)
	c.session = newFetchSession(c.fetchV)
	if m := d.SASLMechanism; m != nil {
		portNum, _ := strconv.Atoi(port)
		if err := authenticate(sasl.WithMetadata(ctx, &sasl.Metadata{Host: host, Port: portNum}), c.pc, m); err != nil {
			return nil, fmt.Errorf("SASL %s: %w", m.Name(), err)
		}
	}
	nc.SetDeadline(time.Time{})
	return c, nil
}

// authenticate runs the SASL handshake and exchange of mechanism m on pc.
func authenticate(ctx context.Context, pc *protocol.Conn, m sasl.Mechanism) error {
	msg, err := pc.RoundTrip(&saslhandshake.Request{Mechanism: m.Name()})
	if err != nil {
		return err
	}
	if code := msg.(*saslhandshake.Response).ErrorCode; code != 0 {
		return kafka.Error(code)
	}
	sess, state, err := m.Start(ctx)
	if err != nil {
		return err
	}
	for done := false; !done; {
		msg, err := pc.RoundTrip(&saslauthenticate.Request{AuthBytes: state})
		if errors.Is(err, io.EOF) { // a broker may refuse by closing the connection
			return kafka.SASLAuthenticationFailed
		}
		if err != nil {
			return err
		}
		res := msg.(*saslauthenticate.Response)
		if res.ErrorCode != 0 {
			return fmt.Errorf("%w: %s", kafka.Error(res.ErrorCode), res.ErrorMessage)
		}
		if done, state, err = sess.Next(ctx, res.AuthBytes); err != nil {
			return err
		}
	}
	return nil
}

func (c *fetchConn) Close() error { return c.pc.Close() }

// setDeadline bounds the next requests on c; the zero time removes the bound.
func (c *fetchConn) setDeadline(t time.Time) { c.pc.SetDeadline(t) }

// earliest asks the broker for the first offset of each partition of topic in ps
// (read committed). errs holds each partition's error; err is the request's.
func (c *fetchConn) earliest(topic string, ps []int) (first []int64, errs []error, err error) {
	req := &listoffsets.Request{ReplicaID: -1, IsolationLevel: 1, Topics: []listoffsets.RequestTopic{{Topic: topic}}}
	for _, p := range ps {
		req.Topics[0].Partitions = append(req.Topics[0].Partitions,
			listoffsets.RequestPartition{Partition: int32(p), CurrentLeaderEpoch: -1, Timestamp: kafka.FirstOffset})
	}
	msg, err := c.pc.RoundTrip(req)
	if err != nil {
		return nil, nil, fmt.Errorf("first offsets from %s: %w", c.addr, err)
	}
	first = make([]int64, len(ps))
	errs = make([]error, len(ps))
	for i, p := range ps {
		errs[i] = fmt.Errorf("first offset from %s: partition %d not in the answer", c.addr, p)
	}
	for _, t := range msg.(*listoffsets.Response).Topics {
		for _, po := range t.Partitions {
			for i, p := range ps {
				if t.Topic != topic || int(po.Partition) != p {
					continue
				}
				errs[i] = nil
				if po.ErrorCode != 0 {
					errs[i] = fmt.Errorf("first offset of partition %d from %s: %w", p, c.addr, kafka.Error(po.ErrorCode))
				}
				first[i] = po.Offset
			}
		}
	}
	return first, errs, nil
}

// fetch sends one Fetch of topic's partitions at offsets (read committed, waiting
// for fetchMinBytes per partition or fetchMaxWait) in c's fetch session: partitions
// become the session's, and an incremental request lists only those new to it or
// whose offset changed, and forgets the others. It returns the answer, which
// parseFetch reads and session.answered must see; it is valid until the next call.
func (c *fetchConn) fetch(topic string, partitions []int, offsets []int64) ([]byte, error) {
	send, forget := c.session.next(partitions, offsets)
	t := fetch.RequestTopic{Topic: topic, Partitions: make([]fetch.RequestPartition, len(send))}
	for i, j := range send {
		t.Partitions[i] = fetch.RequestPartition{Partition: int32(partitions[j]), CurrentLeaderEpoch: -1,
			FetchOffset: offsets[j], LogStartOffset: -1, PartitionMaxBytes: fetchMaxBytes}
	}
	// fetchMinBytes per partition of the session: each answer brings as many bytes per
	// partition as a fetch of that partition alone would.
	req := &fetch.Request{ReplicaID: -1, MaxWaitTime: int32(fetchMaxWait / time.Millisecond),
		MinBytes: int32(min(fetchMinBytes*len(partitions), fetchMaxBytes)), MaxBytes: fetchMaxBytes, IsolationLevel: 1,
		SessionID: c.session.id, SessionEpoch: c.session.epoch}
	if len(send) > 0 {
		req.Topics = []fetch.RequestTopic{t}
	}
	if len(forget) > 0 {
		ft := fetch.RequestForgottenTopic{Topic: topic, Partitions: make([]int32, len(forget))}
		for i, p := range forget {
			ft.Partitions[i] = int32(p)
		}
		req.ForgottenTopics = []fetch.RequestForgottenTopic{ft}
	}
	c.corr++
	if err := protocol.WriteRequest(c.pc, c.fetchV, c.corr, c.clientID, req); err != nil {
		return nil, fmt.Errorf("fetch from %s: %w", c.addr, err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c.pc, size[:]); err != nil {
		return nil, fmt.Errorf("fetch from %s: %w", c.addr, err)
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > maxFetchAnswer {
		return nil, fmt.Errorf("fetch from %s: an answer of %d bytes", c.addr, n)
	}
	if cap(c.buf) < int(n) {
		c.buf = make([]byte, n)
	}
	c.buf = c.buf[:n]
	if _, err := io.ReadFull(c.pc, c.buf); err != nil {
		return nil, fmt.Errorf("fetch from %s: %w", c.addr, err)
	}
	if id := int32(binary.BigEndian.Uint32(c.buf)); id != c.corr {
		return nil, fmt.Errorf("fetch from %s: answer to request %d, want %d", c.addr, id, c.corr)
	}
	return c.buf[4:], nil
}
