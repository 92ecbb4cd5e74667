// Package statetest makes the state tables the server's handler
// packages are tested over: real, empty tables (internal/server/state)
// with the built-in resources, every node its own host, and the job
// table's clock fixed. Only tests import it.
package statetest

import (
	"time"

	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/resc"
)

// Tables are the state tables, empty, and the resource table they read
// values with.
type Tables struct {
	Jobs   *state.Jobs
	Resvs  *state.Resvs
	Nodes  *state.Nodes
	Queues *state.Queues
	Table  *resc.Table
}

// New makes the tables, their clock at now (Unix seconds): the job table
// reads it, and the nodes are reported as of it.
func New(now int64) Tables {
	rt := resc.NewTable(nil)
	table := func() *resc.Table { return rt }
	return Tables{
		Jobs:   state.New(state.Config{Table: table, HostNodes: func(n []string) []string { return n }, Now: func() int64 { return now }}),
		Resvs:  state.NewResvs(table),
		Nodes:  state.NewNodes(table, time.Unix(now, 0)),
		Queues: state.NewQueues(),
		Table:  rt,
	}
}
