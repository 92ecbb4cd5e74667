package events

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// recv reads n events from s or fails after a while.
func recv(t *testing.T, s *Sub, n int) []Event {
	t.Helper()
	var out []Event
	deadline := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case e, ok := <-s.C:
			if !ok {
				t.Fatalf("subscription ended after %d of %d events: %v", len(out), n, s.Err())
			}
			out = append(out, e)
		case <-deadline:
			t.Fatalf("got %d of %d events", len(out), n)
		}
	}
	return out
}

// quiet checks that s has nothing more to deliver once the hub is idle.
func quiet(t *testing.T, s *Sub) {
	t.Helper()
	select {
	case e, ok := <-s.C:
		if ok {
			t.Fatalf("unexpected event %+v", e)
		}
		t.Fatalf("subscription ended: %v", s.Err())
	case <-time.After(50 * time.Millisecond):
	}
}

func seqs(evs []Event) []uint64 {
	out := make([]uint64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}

func ev(id, owner, queue, state string) Event {
	return Event{JobID: id, Owner: owner, Queue: queue, State: state}
}

func TestPublishAssignsSequence(t *testing.T) {
	t.Parallel()
	h := NewHub(10)
	if h.Last() != 0 {
		t.Fatalf("new hub last %d", h.Last())
	}
	for i := uint64(1); i <= 3; i++ {
		if got := h.Publish(Event{JobID: "1.s", Seq: 99}); got != i {
			t.Fatalf("publish %d got seq %d", i, got)
		}
	}
	if h.Last() != 3 {
		t.Fatalf("last %d", h.Last())
	}
}

func TestFilters(t *testing.T) {
	t.Parallel()
	stream := []Event{
		ev("1.s", "alice", "workq", "Q"),
		ev("2[].s", "bob", "workq", "Q"),
		ev("2[1].s", "bob", "workq", "R"),
		ev("2[10].s", "bob", "workq", "F"),
		ev("3.s", "alice", "long", "R"),
		ev("12[1].s", "bob", "workq", "R"),
	}
	for _, tc := range []struct {
		name string
		f    Filter
		want []string
	}{
		{"all", Filter{}, []string{"1.s", "2[].s", "2[1].s", "2[10].s", "3.s", "12[1].s"}},
		{"owner", Filter{Owner: "alice"}, []string{"1.s", "3.s"}},
		{"queue", Filter{Queue: "long"}, []string{"3.s"}},
		{"job", Filter{JobIDs: []string{"3.s"}}, []string{"3.s"}},
		{"array and its subjobs", Filter{JobIDs: []string{"2[].s"}}, []string{"2[].s", "2[1].s", "2[10].s"}},
		{"one subjob", Filter{JobIDs: []string{"2[10].s"}}, []string{"2[10].s"}},
		{"ids and owner", Filter{JobIDs: []string{"1.s", "2[].s"}, Owner: "bob"}, []string{"2[].s", "2[1].s", "2[10].s"}},
		{"owner and queue", Filter{Owner: "alice", Queue: "workq"}, []string{"1.s"}},
		{"nothing", Filter{Owner: "carol"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHub(100)
			s, err := h.Subscribe(tc.f, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, e := range stream {
				h.Publish(e)
			}
			got := recv(t, s, len(tc.want))
			for i, e := range got {
				if e.JobID != tc.want[i] {
					t.Fatalf("event %d is %s, want %v", i, e.JobID, tc.want)
				}
			}
			quiet(t, s)
		})
	}
}

func TestSubscribeFromNow(t *testing.T) {
	t.Parallel()
	h := NewHub(10)
	h.Publish(ev("1.s", "a", "q", "Q"))
	s, err := h.Subscribe(Filter{}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.After() != 1 {
		t.Fatalf("a subscription from now after 1 event starts after %d", s.After())
	}
	h.Publish(ev("1.s", "a", "q", "R"))
	got := recv(t, s, 1)
	if got[0].Seq != 2 || got[0].State != "R" {
		t.Fatalf("got %+v", got[0])
	}
	quiet(t, s)
}

func TestResume(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		retain    int
		published int
		after     uint64
		buffer    int
		f         Filter
		want      []uint64 // nil with gap set
		gap       bool
	}{
		{"from the start", 10, 3, 0, 10, Filter{}, []uint64{1, 2, 3}, false},
		{"from the middle", 10, 5, 3, 10, Filter{}, []uint64{4, 5}, false},
		{"up to date", 10, 5, 5, 10, Filter{}, nil, false},
		{"oldest kept", 4, 10, 6, 10, Filter{}, []uint64{7, 8, 9, 10}, false},
		{"older than kept", 4, 10, 5, 10, Filter{}, nil, true},
		{"ahead of the hub", 10, 3, 4, 10, Filter{}, nil, true},
		{"more than the buffer", 10, 6, 0, 5, Filter{}, nil, true},
		{"filtered within the buffer", 10, 6, 0, 3, Filter{JobIDs: []string{"1.s"}}, []uint64{1, 3, 5}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHub(tc.retain)
			for i := 0; i < tc.published; i++ {
				h.Publish(ev(fmt.Sprintf("%d.s", i%2+1), "a", "q", "Q"))
			}
			s, err := h.Resume(tc.f, tc.after, tc.buffer)
			if tc.gap {
				if !errors.Is(err, ErrGap) {
					t.Fatalf("resume after %d: %v, want ErrGap", tc.after, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got := seqs(recv(t, s, len(tc.want)))
			if fmt.Sprint(got) != fmt.Sprint(tc.want) && len(tc.want) > 0 {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			quiet(t, s)
			// And it goes on live.
			want := h.Publish(ev("1.s", "a", "q", "F"))
			if got := recv(t, s, 1); got[0].Seq != want {
				t.Fatalf("live event %d, want %d", got[0].Seq, want)
			}
		})
	}
}

// A subscriber that reads nothing is cut off with ErrSlow once it is more
// than its buffer behind; Publish never waits for it, and the others go
// on receiving.
func TestSlowSubscriberCutOff(t *testing.T) {
	t.Parallel()
	h := NewHub(1000)
	slow, err := h.Subscribe(Filter{}, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := h.Subscribe(Filter{}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	var got []Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range fast.C {
			got = append(got, e)
			if len(got) == 100 {
				return
			}
		}
	}()
	start := time.Now()
	for i := 0; i < 100; i++ {
		h.Publish(ev("1.s", "a", "q", "R"))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("publishing 100 events took %s", d)
	}
	<-done
	if len(got) != 100 || got[99].Seq != 100 {
		t.Fatalf("the fast subscriber got %d events", len(got))
	}
	// The slow one: what the pump had taken before the cut may still come,
	// then C closes with the reason.
	n := 0
	for range slow.C {
		n++
	}
	if n > 6 {
		t.Fatalf("the slow subscriber received %d events past its buffer of 5", n)
	}
	if !errors.Is(slow.Err(), ErrSlow) {
		t.Fatalf("slow subscriber's Err: %v", slow.Err())
	}
	if h.Subscribers() != 1 {
		t.Fatalf("%d subscribers left, want 1", h.Subscribers())
	}
}

// Events a subscriber does not select never count against its buffer,
// even when the ring turns over many times.
func TestUnselectedEventsDoNotCount(t *testing.T) {
	t.Parallel()
	h := NewHub(8)
	s, err := h.Subscribe(Filter{JobIDs: []string{"7.s"}}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 100; i++ {
		h.Publish(ev("1.s", "a", "q", "R"))
	}
	want := h.Publish(ev("7.s", "a", "q", "F"))
	if got := recv(t, s, 1); got[0].Seq != want {
		t.Fatalf("got %d, want %d", got[0].Seq, want)
	}
}

func TestRestore(t *testing.T) {
	t.Parallel()
	old := []Event{{Seq: 7, JobID: "1.s"}, {Seq: 8, JobID: "2.s"}, {Seq: 9, JobID: "1.s"}}
	h := NewHub(2)
	if err := h.Restore(old); err != nil {
		t.Fatal(err)
	}
	if h.Last() != 9 {
		t.Fatalf("last %d", h.Last())
	}
	if _, err := h.Resume(Filter{}, 6, 10); !errors.Is(err, ErrGap) {
		t.Fatalf("resume before the kept events: %v", err)
	}
	s, err := h.Resume(Filter{}, 7, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := seqs(recv(t, s, 2)); fmt.Sprint(got) != "[8 9]" {
		t.Fatalf("replayed %v", got)
	}
	if seq := h.Publish(Event{JobID: "3.s"}); seq != 10 {
		t.Fatalf("next seq %d", seq)
	}
	if got := recv(t, s, 1); got[0].Seq != 10 {
		t.Fatalf("live %d", got[0].Seq)
	}
	for _, bad := range [][]Event{{{Seq: 1}, {Seq: 3}}, {{Seq: 0}}} {
		if err := NewHub(4).Restore(bad); err == nil {
			t.Fatalf("restore of %v accepted", seqs(bad))
		}
	}
	if err := h.Restore(old); err == nil {
		t.Fatal("restore into a hub in use accepted")
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	h := NewHub(4)
	a, _ := h.Subscribe(Filter{}, 0, 4)
	b, _ := h.Subscribe(Filter{}, 0, 4)
	a.Close()
	for range a.C {
	}
	if a.Err() != nil {
		t.Fatalf("closed by its reader: Err %v", a.Err())
	}
	h.Close()
	for range b.C {
	}
	if !errors.Is(b.Err(), ErrClosed) {
		t.Fatalf("hub closed: Err %v", b.Err())
	}
	if _, err := h.Subscribe(Filter{}, 0, 4); !errors.Is(err, ErrClosed) {
		t.Fatalf("subscribe to a closed hub: %v", err)
	}
}

// Many subscribers and concurrent publishers: each subscriber sees every
// event once, in sequence order (run with -race).
func TestConcurrentFanOut(t *testing.T) {
	t.Parallel()
	h := NewHub(100000)
	const subs, pubs, each = 20, 4, 500
	var wg sync.WaitGroup
	errs := make(chan error, subs)
	for i := 0; i < subs; i++ {
		s, err := h.Subscribe(Filter{}, 0, 100000)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.Close()
			var last uint64
			for n := 0; n < pubs*each; n++ {
				e, ok := <-s.C
				if !ok {
					errs <- fmt.Errorf("ended: %v", s.Err())
					return
				}
				if e.Seq != last+1 {
					errs <- fmt.Errorf("seq %d after %d", e.Seq, last)
					return
				}
				last = e.Seq
			}
		}()
	}
	var pw sync.WaitGroup
	for p := 0; p < pubs; p++ {
		pw.Add(1)
		go func() {
			defer pw.Done()
			for i := 0; i < each; i++ {
				h.Publish(ev("1.s", "a", "q", "R"))
			}
		}()
	}
	pw.Wait()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestArrayOf(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"12[3].srv": "12[].srv",
		"12[].srv":  "",
		"12.srv":    "",
		"12[x].srv": "",
		"12[3":      "",
		"7[10]":     "7[]",
	} {
		if got := ArrayOf(in); got != want {
			t.Errorf("ArrayOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkFanOut1000 publishes to 1,000 subscribers that each read every
// event: the time per Publish includes its delivery to all of them.
func BenchmarkFanOut1000(b *testing.B) {
	const subs = 1000
	h := NewHub(100000)
	var wg sync.WaitGroup
	for i := 0; i < subs; i++ {
		s, err := h.Subscribe(Filter{}, 0, 100000)
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < b.N; n++ {
				if _, ok := <-s.C; !ok {
					b.Errorf("cut off: %v", s.Err())
					return
				}
			}
			s.Close()
		}()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.Publish(ev("1.s", "a", "q", "F"))
	}
	wg.Wait()
}

// BenchmarkPublishBurst is the commit path's share of a scheduling cycle
// that changes 10,000 jobs in one commit, with 1,000 subscribers each
// waiting for one job (as qwait does) and 10 following everything: the
// time of one PublishAll of the 10,000 changes.
func BenchmarkPublishBurst(b *testing.B) {
	h := NewHub(100000)
	for i := 0; i < 1000; i++ {
		s, err := h.Subscribe(Filter{JobIDs: []string{fmt.Sprintf("%d.s", i*10)}}, 0, 100000)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
	}
	for i := 0; i < 10; i++ {
		s, err := h.Subscribe(Filter{}, 0, 100000)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for range s.C {
			}
		}()
		defer s.Close()
	}
	burst := make([]Event, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range burst {
			burst[k] = ev(fmt.Sprintf("%d.s", k), "a", "q", "R")
		}
		h.PublishAll(burst)
	}
}
