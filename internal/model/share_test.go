package model

import (
	"strings"
	"testing"
	"unsafe"
)

func sharedJob(seq int64) *Job {
	vars := "PBS_O_HOME=/home/alice,PBS_O_LANG=C.UTF-8,PBS_O_LOGNAME=alice,PBS_O_PATH=/usr/local/bin:/usr/bin:/bin,PBS_O_SHELL=/bin/bash,PBS_O_WORKDIR=/home/alice/w,PBS_O_HOST=login1,PBS_O_QUEUE=workq"
	return &Job{Seq: seq, Name: strings.Clone("sim"), Owner: strings.Clone("alice@login1"), Queue: strings.Clone("workq"),
		VariableList: strings.Clone(vars),
		ResourceList: append(make(Resources, 0, 8), Resources{{Name: strings.Clone("ncpus"), Value: strings.Clone("1")}, {Name: "select", Value: strings.Clone("1:ncpus=1")}}...)}
}

// Equal strings of two jobs become one; the values stay equal; resource
// lists keep their contents at their length.
func TestShareStrings(t *testing.T) {
	t.Parallel()
	a, b := sharedJob(1), sharedJob(2)
	before := *b
	a.ShareStrings()
	b.ShareStrings()
	if unsafe.StringData(a.VariableList) != unsafe.StringData(b.VariableList) || unsafe.StringData(a.Owner) != unsafe.StringData(b.Owner) ||
		unsafe.StringData(a.ResourceList[1].Value) != unsafe.StringData(b.ResourceList[1].Value) {
		t.Fatal("equal strings of two jobs not shared")
	}
	if b.VariableList != before.VariableList || b.Name != before.Name || len(b.ResourceList) != 2 || cap(b.ResourceList) != 2 ||
		b.ResourceList[1] != before.ResourceList[1] {
		t.Fatalf("values changed: %+v", b)
	}
	b.ResourceList = b.ResourceList.Set("ncpus", "2")
	if v, _ := a.ResourceList.Get("ncpus"); v != "1" {
		t.Fatal("a change of one job's resources shows in another's")
	}
}

func BenchmarkShareStrings(b *testing.B) {
	j := sharedJob(1)
	for i := 0; i < b.N; i++ {
		j.ShareStrings()
	}
}
