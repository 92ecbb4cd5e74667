package trace

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// swfFields, elasticFields and aleaFields are the field counts of a job
// line of the standard format, of this project's elastic extension and
// of Alea's extended format.
const (
	swfFields     = 18
	elasticFields = 20
	aleaFields    = 21
)

// unixTimeFloor is the earliest submit time taken for a Unix time in a
// trace without an UnixStartTime header: ten years of seconds (1980).
const unixTimeFloor = 315360000

// ReadSWF reads a trace in the Standard Workload Format, or in Alea's
// extended SWF (21 fields), plain or gzip-compressed, whole. See the
// package documentation for the fields and header lines it reads; a
// replay that takes the jobs one at a time uses a Stream instead.
func ReadSWF(r io.Reader) (*Workload, error) {
	s, err := newSWFReader(r)
	if err != nil {
		return nil, err
	}
	var jobs jobBuf
	for {
		j, err := s.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		jobs.add(j)
	}
	w := s.w
	w.Jobs = jobs.all()
	if !s.haveStart && len(w.Jobs) > 0 {
		first := w.Jobs[0].Submit
		for _, j := range w.Jobs {
			first = min(first, j.Submit)
		}
		if first >= unixTimeFloor {
			w.UnixStartTime = first
			for i := range w.Jobs {
				w.Jobs[i].Submit -= first
			}
		}
	}
	return &w, nil
}

// swfReader parses an SWF trace one job line at a time: the parser both
// ReadSWF and Stream use. Submit times are as the file writes them (the
// Unix-time guess needs the earliest of them, which its callers find).
type swfReader struct {
	ls     *lines
	names  interner
	fields [aleaFields][]byte
	// w holds the header lines read so far (Jobs stays nil).
	w Workload
	// haveStart is set by an UnixStartTime header line.
	haveStart bool
	// jobs counts the job lines read; lateHeader is set by a MaxProcs,
	// MaxNodes or UnixStartTime line after the first of them.
	jobs       int
	lateHeader bool
	pending    *Job // the first job line, read while reading the header
}

// newSWFReader reads the header: every line up to the first job line,
// which it keeps for next.
func newSWFReader(r io.Reader) (*swfReader, error) {
	ls, err := newLines(r)
	if err != nil {
		return nil, err
	}
	s := &swfReader{ls: ls, names: interner{}, w: Workload{Header: map[string]string{}}}
	j, err := s.scan()
	switch {
	case err == nil:
		s.pending = &j
	case err != io.EOF:
		return nil, err
	}
	return s, nil
}

// next returns the next job, or io.EOF after the last.
func (s *swfReader) next() (Job, error) {
	if j := s.pending; j != nil {
		s.pending = nil
		return *j, nil
	}
	return s.scan()
}

// scan reads lines up to the next job line and converts it.
func (s *swfReader) scan() (Job, error) {
	for {
		line, ok := s.ls.next()
		if !ok {
			if err := s.ls.err(); err != nil {
				return Job{}, err
			}
			return Job{}, io.EOF
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 {
			continue
		}
		if t[0] == ';' {
			key, err := s.w.header(t[1:])
			if err != nil {
				return Job{}, fmt.Errorf("line %d: %w", s.ls.n, err)
			}
			s.haveStart = s.haveStart || key == "UnixStartTime"
			s.lateHeader = s.lateHeader || key != "" && s.jobs > 0
			continue
		}
		n := split(t, s.fields[:])
		if n != swfFields && n != elasticFields && n != aleaFields {
			return Job{}, fmt.Errorf("line %d: %s fields, want %d (SWF), %d (SWF with an elastic range) or %d (Alea's extended SWF)", s.ls.n, fieldCount(n, aleaFields), swfFields, elasticFields, aleaFields)
		}
		j, err := swfJob(s.fields[:n], s.names)
		if err != nil {
			return Job{}, fmt.Errorf("line %d: %w", s.ls.n, err)
		}
		s.jobs++
		return j, nil
	}
}

// split cuts t at blanks (ASCII white space other than newlines) into
// out and returns the number of fields, len(out)+1 meaning more than
// len(out).
func split(t []byte, out [][]byte) int {
	n := 0
	for {
		for len(t) > 0 && blank(t[0]) {
			t = t[1:]
		}
		if len(t) == 0 {
			return n
		}
		if n == len(out) {
			return n + 1
		}
		i := 0
		for i < len(t) && !blank(t[i]) {
			i++
		}
		out[n] = t[:i]
		n++
		t = t[i:]
	}
}

func blank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }

// fieldCount writes split's count n for a message.
func fieldCount(n, max int) string {
	if n > max {
		return "more than " + strconv.Itoa(max)
	}
	return strconv.Itoa(n)
}

// swfNames are the fields' names, for error messages.
var swfNames = [aleaFields]string{
	"job number", "submit time", "wait time", "run time", "allocated processors",
	"average CPU time", "used memory", "requested processors", "requested time",
	"requested memory", "status", "user id", "group id", "executable number",
	"queue number", "partition number", "preceding job", "think time",
	"node list", "queue name", "node spec",
}

// swfJob converts the fields of one job line.
func swfJob(f [][]byte, names interner) (Job, error) {
	var v [swfFields]int64
	for i := 0; i < swfFields; i++ {
		if i == 5 || i == 6 { // average CPU time, used memory: not kept
			if !isDecimal(f[i]) {
				return Job{}, fmt.Errorf("field %d (%s): %q is not a number", i+1, swfNames[i], f[i])
			}
			continue
		}
		n, ok := parseInt(f[i])
		if !ok {
			return Job{}, fmt.Errorf("field %d (%s): %q is not an integer", i+1, swfNames[i], f[i])
		}
		switch i {
		case 4, 7, 10, 15: // held as int
			if !fitsInt(n) {
				return Job{}, fmt.Errorf("field %d (%s): %d out of range", i+1, swfNames[i], n)
			}
		}
		v[i] = n
	}
	j := Job{
		ID: v[0], Submit: v[1], Wait: v[2], Run: v[3], Procs: int(v[4]),
		ReqProcs: int(v[7]), ReqTime: v[8], ReqMem: v[9], Status: int(v[10]),
		User: names.get(f[11]), Group: names.get(f[12]), Partition: int(v[15]),
	}
	if v[14] >= 0 {
		j.Queue = names.get(f[14])
	}
	if len(f) == elasticFields {
		lo, ok1 := parseInt(f[18])
		hi, ok2 := parseInt(f[19])
		switch {
		case !ok1 || !ok2:
			return Job{}, fmt.Errorf("fields 19-20 (minimum and maximum processors): %q %q are not integers", f[18], f[19])
		case lo == -1 && hi == -1:
			// A rigid job.
		case lo < 1 || hi < lo || !fitsInt(hi):
			return Job{}, fmt.Errorf("fields 19-20 (minimum and maximum processors): %d %d, want 1 <= minimum <= maximum < 2^31, or -1 -1 for a rigid job", lo, hi)
		default:
			j.MinProcs, j.MaxProcs = int(lo), int(hi)
		}
	}
	if len(f) == aleaFields {
		if !nodeList(f[18]) {
			return Job{}, fmt.Errorf("field 19 (%s): %q is not {n,n,...}", swfNames[18], f[18])
		}
		j.Queue = names.get(f[19])
		j.NodeSpec = names.get(f[20])
	}
	return j, nil
}

// nodeList checks Alea's "{id,id,...}" (possibly "{}").
func nodeList(b []byte) bool {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	b = b[1 : len(b)-1]
	if len(b) == 0 {
		return true
	}
	for len(b) > 0 {
		var id []byte
		id, b, _ = bytes.Cut(b, []byte{','})
		if _, ok := parseInt(id); !ok {
			return false
		}
	}
	return true
}

// header reads one "; Key: value" line (without the ';'), returning the
// key when it is one of those parsed into fields (MaxProcs, MaxNodes,
// UnixStartTime), "" for any other.
func (w *Workload) header(b []byte) (string, error) {
	k, v, ok := strings.Cut(string(b), ":")
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if !ok || k == "" || strings.ContainsAny(k, " \t") {
		return "", nil // a comment or a continuation line
	}
	if old, dup := w.Header[k]; dup {
		w.Header[k] = old + "\n" + v
	} else {
		w.Header[k] = v
	}
	switch k {
	case "MaxProcs", "MaxNodes", "UnixStartTime":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || k != "UnixStartTime" && !fitsInt(n) {
			return "", fmt.Errorf("header %s: %q is not a count", k, v)
		}
		switch k {
		case "MaxProcs":
			w.MaxProcs = int(n)
		case "MaxNodes":
			w.MaxNodes = int(n)
		default:
			w.UnixStartTime = n
		}
		return k, nil
	}
	return "", nil
}

// jobBuf collects jobs in chunks of fixed size, so a trace of unknown
// length costs one copy at the end instead of a chain of ever larger
// slices that append would leave behind.
type jobBuf struct {
	full [][]Job
	cur  []Job
}

const jobChunk = 4096

func (b *jobBuf) add(j Job) {
	if len(b.cur) == cap(b.cur) {
		if b.cur != nil {
			b.full = append(b.full, b.cur)
		}
		b.cur = make([]Job, 0, jobChunk)
	}
	b.cur = append(b.cur, j)
}

// all returns the jobs in one slice of exactly their number.
func (b *jobBuf) all() []Job {
	if len(b.full) == 0 {
		return slices.Clip(b.cur)
	}
	out := make([]Job, 0, len(b.full)*jobChunk+len(b.cur))
	for _, c := range b.full {
		out = append(out, c...)
	}
	return append(out, b.cur...)
}
