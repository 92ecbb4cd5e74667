package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// Job is one job of a workload. Integer fields are -1 when unknown.
type Job struct {
	ID int64 // SWF job number; accounting: 1, 2, ... in submit order
	// Submit is seconds from the start of the trace (UnixStartTime).
	Submit int64
	Wait   int64 // seconds from submit to start
	Run    int64 // seconds from start to end
	// Procs is the allocated processor count (SWF field 5). Normalize
	// rewrites it to the count to replay.
	Procs    int
	ReqProcs int // requested processors (SWF field 8)
	// ReqTime is the requested walltime in seconds (SWF field 9).
	// Normalize rewrites it to the walltime to replay.
	ReqTime int64
	// ReqMem is the requested memory as the source writes it: SWF field
	// 10 (KB per processor by the standard, bytes per job in Alea's
	// traces); accounting: Resource_List.mem in bytes.
	ReqMem    int64
	User      string // SWF user id in decimal; accounting user name
	Group     string
	Queue     string // SWF queue number in decimal ("" if -1); queue name
	Partition int    // SWF field 16
	// Status is SWF's: 1 done, 0 failed, 5 cancelled, -1 unknown.
	Status int
	// ExitStatus is the Exit_status of the E record (accounting only).
	ExitStatus int
	// NodeSpec is the Torque node spec ("2:ppn=8:cl_zegox#excl") of the
	// extended SWF, or Resource_List.nodes of an accounting record.
	NodeSpec string
	Select   string // Resource_List.select of an accounting record
	PBSID    string // the PBS job id of an accounting record
	// MinProcs and MaxProcs are an elastic job's range of processors
	// (fields 19 and 20 of the elastic extension of SWF; Normalize caps
	// MaxProcs at the machine); both 0 for a rigid job.
	MinProcs, MaxProcs int
}

// Machine is one cluster of a .machines file.
type Machine struct {
	ID          int
	Name        string
	Nodes       int
	CPUsPerNode int
	Speed       int   // CPU speed rating; 1 = run times as recorded
	MemKB       int64 // memory per node in KB; 0 if not given
}

// Workload is a parsed trace.
type Workload struct {
	Jobs []Job
	// MaxProcs and MaxNodes are the machine's size from the header (0 if
	// not given). After Normalize, MaxProcs is the machine replayed.
	MaxProcs int
	MaxNodes int
	// UnixStartTime is the Unix time of submit time 0 (0 if unknown).
	UnixStartTime int64
	// Header holds the "; Key: value" lines of an SWF header; a key given
	// several times (Queue, Partition, Note) has its values joined by
	// newlines.
	Header   map[string]string
	Machines []Machine // from a .machines file (Load, ReadMachines)
	// Dropped counts the jobs Normalize removed.
	Dropped int
}

// maxLine bounds one input line; longer lines are an error, so no input
// makes a reader hold more than this much of it at once.
const maxLine = 4 << 20

// Open opens a trace file, decompressing it when it is gzip data.
func Open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := decompress(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{r, f}, nil
}

// Load reads the SWF trace at path and, when it exists, the Alea
// machines file beside it: path+".machines", or for a path ending in ".gz"
// also the name without it. A trace without MaxProcs or MaxNodes headers
// takes them from the machines file.
func Load(path string) (*Workload, error) {
	rc, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	w, err := ReadSWF(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := loadMachines(w, path); err != nil {
		return nil, err
	}
	return w, nil
}

// loadMachines reads the machines file beside the trace at path into
// w.Machines, if there is one, and fills in MaxProcs and MaxNodes from it
// when the trace's header does not give them.
func loadMachines(w *Workload, path string) error {
	names := []string{path + ".machines"}
	if base, ok := strings.CutSuffix(path, ".gz"); ok {
		names = append(names, base+".machines")
	}
	for _, name := range names {
		f, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		w.Machines, err = ReadMachines(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		procs, nodes := 0, 0
		for _, m := range w.Machines {
			procs += m.Nodes * m.CPUsPerNode
			nodes += m.Nodes
		}
		if w.MaxProcs <= 0 {
			w.MaxProcs = procs
		}
		if w.MaxNodes <= 0 {
			w.MaxNodes = nodes
		}
		return nil
	}
	return nil
}

// decompress returns r itself, or a gzip reader over it when it starts
// with the gzip magic number.
func decompress(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return gzip.NewReader(br)
	}
	return br, nil
}

// lines reads r (decompressed when gzip) one line at a time.
type lines struct {
	sc *bufio.Scanner
	n  int // number of the current line, from 1
}

func newLines(r io.Reader) (*lines, error) {
	r, err := decompress(r)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &lines{sc: sc}, nil
}

// next returns the next line without its line ending, valid until the
// following call.
func (l *lines) next() ([]byte, bool) {
	if !l.sc.Scan() {
		return nil, false
	}
	l.n++
	return bytes.TrimSuffix(l.sc.Bytes(), []byte{'\r'}), true
}

// err reports why reading stopped early (nil at the end of the input).
func (l *lines) err() error {
	err := l.sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("line %d: longer than %d bytes", l.n+1, maxLine)
	}
	if err != nil {
		return fmt.Errorf("after line %d: %w", l.n, err)
	}
	return nil
}

// interner shares one string per distinct value (user, group and queue
// names repeat across a trace's jobs).
type interner map[string]string

func (in interner) get(b []byte) string {
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	in[s] = s
	return s
}

// parseInt parses a decimal integer with an optional sign.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}

// isDecimal accepts an integer with an optional fraction ("12", "-1",
// "3.25").
func isDecimal(b []byte) bool {
	i, frac, hasFrac := bytes.Cut(b, []byte{'.'})
	if _, ok := parseInt(i); !ok {
		return false
	}
	if !hasFrac {
		return true
	}
	if len(frac) == 0 {
		return false
	}
	for _, c := range frac {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// fitsInt reports whether v fits an int on every platform Go supports
// (fields held as int are processor counts and codes).
func fitsInt(v int64) bool { return v >= -1<<31 && v <= 1<<31-1 }
