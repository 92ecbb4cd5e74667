package cmdutil

import (
	"bytes"
	"fmt"
	"testing"
)

// Buffered output keeps its order with standard error on one stream, and
// the flush writes what is left.
func TestBufferOutputOrder(t *testing.T) {
	var both bytes.Buffer
	e := &Env{Name: "qstat", Stdout: &both, Stderr: &both}
	flush := e.BufferOutput()
	fmt.Fprint(e.Stdout, "row 1\n")
	if both.Len() != 0 {
		t.Fatalf("written before a flush: %q", both.String())
	}
	e.Errorf("bad id")
	fmt.Fprint(e.Stdout, "row 2\n")
	if err := flush(); err != nil {
		t.Fatal(err)
	}
	if want := "row 1\nqstat: bad id\nrow 2\n"; both.String() != want {
		t.Fatalf("got %q, want %q", both.String(), want)
	}
}
