package store

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gopbs/gopbs/proto"
)

// maxGroup bounds how many mutations share one transaction, so one commit
// stays short even under a flood of submissions.
const maxGroup = 512

// Committer serialises every durable mutation of the server. Callers hand
// it a function; the committer's goroutine runs pending functions one after
// another while holding lock (the server's state lock, so readers never
// see uncommitted state), commits all their writes in one transaction, and
// only then releases the lock and returns to the callers.
//
// A mutation function must either fail without changing anything, or
// succeed and record in its Batch every write that makes its change
// durable. When the commit fails, rollback runs (still under lock) to
// restore the in-memory state from the store, and every caller of the
// group gets the error: nothing is acknowledged that is not durable.
type Committer struct {
	st       *Store
	lock     sync.Locker
	rollback func(error)
	reqs     chan *request
	// seal, when set, runs under lock after a group's functions and
	// returns one more batch to commit with them (SetSeal).
	seal     func() *Batch
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

type request struct {
	fn  func(*Batch) error
	err chan error
}

// NewCommitter starts the commit goroutine. Stop it with Close.
func NewCommitter(st *Store, lock sync.Locker, rollback func(error)) *Committer {
	c := &Committer{st: st, lock: lock, rollback: rollback, reqs: make(chan *request, maxGroup), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// SetSeal makes f run under the lock after each group's functions, before
// the commit: the batch it returns (nil: none) commits with the group's
// and its After functions run last. The server writes there the changes
// the group made that its event stream publishes, so that they are
// durable together with the change. Call it before the first Do.
func (c *Committer) SetSeal(f func() *Batch) { c.seal = f }

// Do runs fn in the next group and returns after the group's commit, with
// fn's own error or the commit's.
func (c *Committer) Do(fn func(*Batch) error) error {
	r := &request{fn: fn, err: make(chan error, 1)}
	select {
	case c.reqs <- r:
	case <-c.stop:
		return proto.NewError(proto.PBSE_SVRDOWN)
	}
	select {
	case err := <-r.err:
		return err
	case <-c.done:
		// The goroutine ended; our request was either answered just
		// before, or slipped in after the final drain and was never run.
		select {
		case err := <-r.err:
			return err
		default:
			return proto.NewError(proto.PBSE_SVRDOWN)
		}
	}
}

// Close stops the goroutine. Requests not yet started are answered with
// PBSE_SVRDOWN; a group already running finishes its commit first.
func (c *Committer) Close() {
	c.stopOnce.Do(func() { close(c.stop) })
	<-c.done
}

func (c *Committer) run() {
	defer close(c.done)
	group := make([]*request, 0, maxGroup)
	results := make([]error, 0, maxGroup)
	batches := make([]*Batch, 0, maxGroup)
	var after []func()
	for {
		var r *request
		select {
		case r = <-c.reqs:
		case <-c.stop:
			for {
				select {
				case r := <-c.reqs:
					r.err <- proto.NewError(proto.PBSE_SVRDOWN)
				default:
					return
				}
			}
		}
		group = append(group[:0], r)
	drain:
		for len(group) < maxGroup {
			select {
			case r := <-c.reqs:
				group = append(group, r)
			default:
				break drain
			}
		}
		results = results[:0]
		batches = batches[:0]
		after = after[:0]
		c.lock.Lock()
		for _, r := range group {
			b := &Batch{}
			err := r.fn(b)
			results = append(results, err)
			if err == nil {
				after = append(after, b.after...)
			}
			if err == nil && !b.Empty() {
				batches = append(batches, b)
			}
		}
		if c.seal != nil {
			if b := c.seal(); b != nil && !b.Empty() {
				batches = append(batches, b)
				after = append(after, b.after...)
			}
		}
		if len(batches) > 0 {
			if err := c.st.Commit(batches); err != nil {
				after = after[:0]
				c.rollback(err)
				saveErr := &proto.Error{Code: proto.PBSE_SAVE_ERR, Text: fmt.Sprintf("%s: %v", proto.PBSE_SAVE_ERR.Message(), err)}
				if pe := (*proto.Error)(nil); errors.As(err, &pe) {
					saveErr = pe // a replicated group's own refusal (no quorum)
				}
				for i := range results {
					if results[i] == nil {
						results[i] = saveErr
					}
				}
			}
		}
		c.lock.Unlock()
		for _, f := range after {
			f()
		}
		for i, r := range group {
			r.err <- results[i]
		}
	}
}
