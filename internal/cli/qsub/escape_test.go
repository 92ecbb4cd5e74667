package qsub

import (
	"bytes"
	"testing"
)

func TestEscapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reads []string
		sent  string
		act   escAction
	}{
		{[]string{"ls\r"}, "ls\r", escNone},
		{[]string{"~."}, "", escDisconnect},
		{[]string{"ls\r~."}, "ls\r", escDisconnect},
		{[]string{"ls\r", "~", "."}, "ls\r", escDisconnect},
		{[]string{"a~."}, "a~.", escNone},
		{[]string{"~~."}, "~.", escNone},
		{[]string{"~x"}, "~x", escNone},
		{[]string{"\n~\x1a"}, "\n", escSuspend},
		{[]string{"echo ~/x\r"}, "echo ~/x\r", escNone},
	}
	for _, tt := range tests {
		var e escaper
		var sent []byte
		act := escNone
		for _, r := range tt.reads {
			out, a, _ := e.scan([]byte(r))
			sent = append(sent, out...)
			if a != escNone {
				act = a
				break
			}
		}
		if string(sent) != tt.sent || act != tt.act {
			t.Errorf("%q: sent %q, action %d; want %q, %d", tt.reads, sent, act, tt.sent, tt.act)
		}
	}
}

// FuzzEscapes: the escaper sends every byte of input but the escapes it
// takes and the tildes that start them, whatever the reads' boundaries.
func FuzzEscapes(f *testing.F) {
	f.Add([]byte("ls\r~.more"), 3)
	f.Add([]byte("~~~x\n~\x1a"), 1)
	f.Fuzz(func(t *testing.T, in []byte, cut int) {
		var whole escaper
		want, wantAct, _ := whole.scan(in)
		if cut < 0 || cut > len(in) {
			cut = len(in) / 2
		}
		var parts escaper
		got, act, rest := parts.scan(in[:cut])
		if act == escNone {
			var more []byte
			more, act, rest = parts.scan(in[cut:])
			got = append(got, more...)
		}
		_ = rest
		if act != wantAct || !bytes.Equal(got, want) {
			t.Fatalf("%q cut at %d: %q %d, in one read %q %d", in, cut, got, act, want, wantAct)
		}
		if wantAct == escNone && len(want) > len(in) {
			t.Fatalf("%q: sent more than was typed: %q", in, want)
		}
	})
}
