package publish

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kraftwatch/kraftwatch/events"
)

// The rebalanced event: the coordinator wrote a new group epoch. It travels like the
// rebalance-needed event (structured CloudEvent, deterministic id as Nats-Msg-Id, the
// expected last sequence of its subject, the same streams and workers), on its own
// subject family:
//
//	<prefix>.<cluster token>.rebalanced.<group type>.<group token>
//
// (RebalancedSubject; internal subject "_kraftwatch." and the same). Of the rules that
// make an event unnecessary, the first two apply: the subject's last event is the same
// event (same id), or has a later Cause (a later bump record of the group's
// __consumer_offsets partition). A bump is never skipped because the hash is the same.

// RebalancedSubject returns the subject of a group's rebalanced events.
func (p *Publisher) RebalancedSubject(t events.GroupType, groupID string) string {
	return p.root + "." + events.RebalancedFamily + "." + t.String() + "." + events.EscapeToken(groupID)
}

// EnqueueRebalanced is Enqueue for a rebalanced event: it validates ev, encodes it and
// queues it, with Enqueue's blocking and errors. An empty ClusterID is filled from the
// Config.
func (p *Publisher) EnqueueRebalanced(ctx context.Context, ev events.GroupRebalanced) error {
	if ev.ClusterID == "" {
		ev.ClusterID = p.cfg.ClusterID
	} else if ev.ClusterID != p.cfg.ClusterID {
		return fmt.Errorf("%w: group %q: cluster id %q, publisher's is %q", events.ErrInvalidEvent, ev.GroupID, ev.ClusterID, p.cfg.ClusterID)
	}
	env, err := ev.Wrap(p.cfg.Now())
	if err != nil {
		return err
	}
	body, err := json.Marshal(env)
	if err != nil {
		return fmt.Errorf("%w: group %q: %w", events.ErrInvalidEvent, ev.GroupID, err)
	}
	pos := ev.ConsumerOffsets
	pm := &pending{
		kind:  kindRebalanced,
		key:   ev.Key(),
		id:    env.ID,
		body:  body,
		cause: rebalancedCause(pos),
		time:  env.Time,
	}
	pm.setSubject(p, p.RebalancedSubject(ev.GroupType, ev.GroupID))
	return p.enqueue(ctx, pm)
}

// rebalancedCause orders rebalanced events of a group by their bump record (a group's
// records are all in one __consumer_offsets partition).
func rebalancedCause(pos events.OffsetsPosition) events.Cause {
	return events.Cause{ConsumerOffsets: &pos}
}

// decodeLastRebalanced is decodeLast for a subject of the rebalanced family.
func (p *Publisher) decodeLastRebalanced(subject string, seq uint64, data []byte) *lastEvent {
	env, err := events.DecodeGroupRebalanced(data)
	if err == nil && p.RebalancedSubject(env.Data.GroupType, env.Data.GroupID) != subject {
		err = fmt.Errorf("its group %s %q belongs on another subject", env.Data.GroupType, env.Data.GroupID)
	}
	if err != nil {
		p.log.Warn("stored message is not a rebalanced event of this subject; ignored",
			"subject", subject, "seq", seq, "error", err)
		return nil
	}
	d := &env.Data
	return &lastEvent{kind: kindRebalanced, key: d.Key(), id: env.ID, cause: rebalancedCause(d.ConsumerOffsets), time: env.Time}
}
