package store

import (
	"sync"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
)

// BenchmarkCommitOne is one job and its script per transaction: the floor
// under one client's submission rate.
func BenchmarkCommitOne(b *testing.B) {
	st, _, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var mu sync.Mutex
	c := NewCommitter(st, &mu, func(error) {})
	defer c.Close()
	script := []byte("#!/bin/sh\n/bin/true\n")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		seq := int64(i)
		err := c.Do(func(bt *Batch) error {
			j := &model.Job{Seq: seq, ID: "1.srv", Name: "bench", Owner: "root@host", Queue: "workq", VariableList: "PBS_O_HOME=/root,PBS_O_WORKDIR=/root,PBS_O_HOST=host"}
			bt.PutJob(j)
			bt.PutScript(seq, script)
			bt.SetNextSeq(seq + 1)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
