package engine

import (
	"context"

	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/image"
)

// View is the engine's state as a Query sees it. Everything in it belongs to the
// engine's goroutine and is valid only during the Query's function: read it there,
// copy what is kept, never modify it.
type View struct {
	State   *groups.State
	Image   *image.Image
	Tracker *groups.Tracker // hashes in Scheme
	Scheme  string
	History *History // nil when there is none (kraftwatch groups reading Kafka)
	// Synced is false while the engine replays its inputs at start-up.
	Synced bool
}

type query struct {
	ctx  context.Context
	fn   func(*View)
	done chan struct{}
}

// Query runs fn on the engine's goroutine, between two inputs, and returns when it
// has run: the only safe way to read the group state. fn must be quick (it holds up
// the engine) and must not call back into the engine. While records are queued the
// engine applies recordsPerQuery of them between two queries, so readers wait
// rather than slow the hot path down. Query returns ctx's error if
// ctx ends first (fn may then still run, or not), ErrStopped once Run has returned.
func (e *Engine) Query(ctx context.Context, fn func(*View)) error {
	q := query{ctx: ctx, fn: fn, done: make(chan struct{})}
	select {
	case e.queries <- q:
	case <-ctx.Done():
		return ctx.Err()
	case <-e.done:
		return ErrStopped
	}
	select {
	case <-q.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-e.done:
		return ErrStopped
	}
}

// recordsPerQuery is how many queued records the engine applies after serving a
// Query before it serves the next: readers never take more than their share while
// records wait (BenchmarkRecordsWhileQueried).
const recordsPerQuery = 256

// queryable returns the channel of queries, or nil (no query now) while records
// are waiting and fewer than recordsPerQuery were applied since the last query.
func (e *Engine) queryable() chan query {
	if e.sinceQuery < recordsPerQuery && len(e.records) > 0 {
		return nil
	}
	return e.queries
}

// serve runs one query, unless its caller gave up while it waited.
func (e *Engine) serve(q query) {
	defer close(q.done)
	e.sinceQuery = 0
	if q.ctx.Err() != nil {
		return
	}
	q.fn(&View{State: e.state, Image: e.img, Tracker: e.tracker, Scheme: e.cfg.Scheme, History: e.history, Synced: e.synced.Load()})
}
