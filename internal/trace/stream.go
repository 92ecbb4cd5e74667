package trace

import (
	"errors"
	"fmt"
	"io"
)

// ErrNotStreamable is the error of a Stream over an SWF trace that cannot
// be replayed in one pass with the results Load and Normalize give: a job
// submitted earlier than one the stream has already yielded (the file is
// out of submit order by more than the reorder window), a job submitted
// before the time base taken from the jobs already yielded, or a
// MaxProcs, MaxNodes or UnixStartTime header line after the first job.
// Such a trace is replayed from memory (Load, Normalize) instead.
var ErrNotStreamable = errors.New("trace cannot be replayed in one pass")

// ReorderWindow is how many kept jobs a Stream holds back to put a trace
// that is not quite sorted by submit time in order (in a ring of 8,192
// Jobs of 176 bytes: 1.4 MB). The archive's traces are sorted; a job out
// of order by more than this is ErrNotStreamable.
const ReorderWindow = 4096

// A Stream yields the jobs of an SWF trace one at a time, as Load and
// then Normalize would leave them, without holding the trace: each job is
// kept or dropped by Normalize's rules as it is read, submit times are
// made relative as ReadSWF makes them, and jobs come out in submit order,
// ties in file order, through a reorder window of ReorderWindow jobs.
// Memory is that window, plus one string per distinct user, group, queue
// and node spec.
type Stream struct {
	r      *swfReader
	mem    []Job // the jobs of MemoryStream, once normalized
	closer io.Closer
	// Workload is the trace's header (and machines file, from OpenStream):
	// Jobs stays nil. Normalize sets MaxProcs to the machine replayed and
	// makes UnixStartTime final; Dropped counts the jobs dropped so far.
	Workload *Workload
	procs    int
	window   int // ReorderWindow; smaller in tests
	inMemory bool

	held jobRing // kept jobs read and not yet yielded, by submit then file order
	eof  bool

	// The time base: the earliest submit time read, over every job (also
	// those dropped), as ReadSWF takes it; decided by Normalize on the
	// first window, after which a job submitted before it is not
	// streamable.
	minSubmit  int64
	seen       bool
	decided    bool
	base       int64
	lastSubmit int64 // as written, of the last job yielded
	yielded    int
}

// OpenStream opens the SWF trace at path (plain or gzip) for a one-pass
// replay: it reads the header lines and the machines file beside the
// trace, as Load does. Call Normalize before Next, and Close at the end.
func OpenStream(path string) (*Stream, error) {
	rc, err := Open(path)
	if err != nil {
		return nil, err
	}
	s, err := NewStream(rc)
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.closer = rc
	if err := loadMachines(s.Workload, path); err != nil {
		rc.Close()
		return nil, err
	}
	return s, nil
}

// NewStream reads the header of the SWF trace r (plain or gzip).
func NewStream(r io.Reader) (*Stream, error) {
	sr, err := newSWFReader(r)
	if err != nil {
		return nil, err
	}
	return &Stream{r: sr, Workload: &sr.w, window: ReorderWindow}, nil
}

// MemoryStream is a Stream over a workload read whole (an accounting log,
// or an SWF trace that is not streamable): its Normalize is the function
// Normalize, which sorts the jobs, and Next yields them.
func MemoryStream(w *Workload) *Stream {
	return &Stream{Workload: w, inMemory: true}
}

// Normalize sets the machine the jobs are kept for, as the function
// Normalize does: procs processors when procs > 0, else MaxProcs. It
// reads the first window of jobs (so it may fail as Next does), which
// fixes the time base: UnixStartTime is final when it returns.
func (s *Stream) Normalize(procs int) error {
	if s.inMemory {
		if err := Normalize(s.Workload, procs); err != nil {
			return err
		}
		s.procs, s.mem = s.Workload.MaxProcs, s.Workload.Jobs
		return nil
	}
	procs, err := machineSize(procs, s.Workload.MaxProcs)
	if err != nil {
		return err
	}
	s.procs = procs
	s.Workload.MaxProcs = procs
	// Read the first window, which decides the time base: UnixStartTime
	// is final from here on, before the replay needs it.
	if err := s.fill(); err != nil {
		return err
	}
	s.decided = true
	// ReadSWF's guess: without an UnixStartTime header, a trace whose
	// earliest submit is a plausible Unix time writes Unix times.
	if !s.r.haveStart && s.seen && s.minSubmit >= unixTimeFloor {
		s.base = s.minSubmit
		s.Workload.UnixStartTime = s.base
	}
	return nil
}

// fill reads until the window is full or the trace ends.
func (s *Stream) fill() error {
	for !s.eof && s.held.n <= s.window {
		if err := s.read(); err != nil {
			return err
		}
	}
	return nil
}

// Yielded is the number of jobs Next has returned.
func (s *Stream) Yielded() int { return s.yielded }

// Close closes the file OpenStream opened; closing again does nothing.
func (s *Stream) Close() error {
	c := s.closer
	if c == nil {
		return nil
	}
	s.closer = nil
	return c.Close()
}

// Next returns the next job to replay, or io.EOF after the last. Errors
// name the line; see ErrNotStreamable for the traces it refuses.
func (s *Stream) Next() (Job, error) {
	if s.procs <= 0 {
		return Job{}, errors.New("trace: Stream.Next before Normalize")
	}
	if s.inMemory {
		if len(s.mem) == 0 {
			return Job{}, io.EOF
		}
		j := s.mem[0]
		s.mem = s.mem[1:]
		s.yielded++
		return j, nil
	}
	if err := s.fill(); err != nil {
		return Job{}, err
	}
	if s.held.n == 0 {
		return Job{}, io.EOF
	}
	j := s.held.pop()
	s.lastSubmit = j.Submit
	j.Submit -= s.base
	s.yielded++
	return j, nil
}

// read reads one job, drops it or holds it in order.
func (s *Stream) read() error {
	j, err := s.r.next()
	if err == io.EOF {
		s.eof = true
		return nil
	}
	if err != nil {
		return err
	}
	line := s.r.ls.n
	if s.r.lateHeader {
		return fmt.Errorf("line %d: %w: a MaxProcs, MaxNodes or UnixStartTime header after the first job", line, ErrNotStreamable)
	}
	if !s.seen || j.Submit < s.minSubmit {
		if s.decided && s.base != 0 {
			return fmt.Errorf("line %d: %w: job %d submitted at %d, before the trace's start %d taken from the jobs already replayed",
				line, ErrNotStreamable, j.ID, j.Submit, s.base)
		}
		s.minSubmit, s.seen = j.Submit, true
	}
	// A submit time < 0 is unknown and dropped (Normalize's rule): with a
	// time base it would have been refused above.
	if j.Submit < 0 || !normalJob(&j, s.procs) {
		s.Workload.Dropped++
		return nil
	}
	if s.yielded > 0 && j.Submit < s.lastSubmit {
		return fmt.Errorf("line %d: %w: job %d submitted at %d, before a job at %d already replayed (out of submit order by more than %d jobs)",
			line, ErrNotStreamable, j.ID, j.Submit, s.lastSubmit, s.window)
	}
	s.held.insert(j)
	return nil
}

// jobRing is the reorder window: a ring of jobs sorted by submit time,
// so that taking the first and adding one allocate nothing once it has
// grown to the window's size.
type jobRing struct {
	buf     []Job // a power of two long
	head, n int
}

func (r *jobRing) at(i int) *Job { return &r.buf[(r.head+i)&(len(r.buf)-1)] }

// insert adds j in order: at the end for a sorted trace, else after the
// last job submitted no later (ties keep file order).
func (r *jobRing) insert(j Job) {
	if r.n == len(r.buf) {
		buf := make([]Job, max(16, 2*len(r.buf)))
		for i := range r.n {
			buf[i] = *r.at(i)
		}
		r.buf, r.head = buf, 0
	}
	i := r.n
	r.n++
	for i > 0 && r.at(i-1).Submit > j.Submit {
		*r.at(i) = *r.at(i - 1)
		i--
	}
	*r.at(i) = j
}

// pop takes the first job.
func (r *jobRing) pop() Job {
	p := r.at(0)
	j := *p
	*p = Job{} // let its strings go
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return j
}
