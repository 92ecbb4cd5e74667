package acctlog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/acctsum"
	"github.com/gopbs/gopbs/internal/atomicfile"
)

// DayFile is one file of the accounting directory: YYYYMMDD, or a
// compressed YYYYMMDD.gz.
type DayFile struct {
	Path string
	Day  time.Time // its midnight, local; zero for a file given alone
}

// DayFiles lists dir's day files in date order (a single file given with
// -f is one of its own, of no particular day).
func DayFiles(dir string, loc *time.Location) ([]DayFile, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []DayFile{{Path: dir}}, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []DayFile
	for _, e := range ents {
		name := strings.TrimSuffix(e.Name(), ".gz")
		if e.IsDir() || len(name) != 8 {
			continue
		}
		day, err := time.ParseInLocation("20060102", name, loc)
		if err != nil {
			continue
		}
		out = append(out, DayFile{Path: filepath.Join(dir, e.Name()), Day: day})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Day.Before(out[j].Day) })
	return out, nil
}

// summary is what one file holds, as qacct's cache keeps it: the ended
// jobs' usage, the range of job numbers its records name (for -j), and
// its damaged lines.
type Summary struct {
	Version     int
	Size, Mod   int64 // the file's, when it was read
	Records     int64
	Ended       int64
	Damaged     int64
	FirstDamage string
	MinSeq      int64
	MaxSeq      int64
	// Tables are the usage as the cache keeps it: [0] by every key but
	// its host, [1+d] by dimension d alone. A day's jobs have nearly as
	// many hosts as jobs: by host with anything else, the log is read.
	// Each is encoded apart, and decoded only when a report needs it.
	Tables []msgpack.RawMessage

	sums   acctsum.Sums // by whole key, when read from the log in this run
	Unread string
}

// table is one of a summary's tables, as arrays (msgpack).
type table struct {
	Keys []acctsum.Key
	Sums []acctsum.Sum
}

// view is the usage to group by need's dimensions: the whole keys when
// the log was read in this run, else the cached table that answers; false
// when none does.
func (s *Summary) View(need []acctsum.Dim) (acctsum.Sums, bool) {
	if s.sums != nil {
		return s.sums, true
	}
	i, ok := tableFor(need)
	if !ok || len(s.Tables) != 1+len(acctsum.Dims) {
		return nil, false
	}
	return s.table(i)
}

// tableFor is the table that answers a report grouping by need: [0] by
// every key but the host, [1+d] by dimension d alone (no dimension: any
// one sums to the total). By the host with anything else, none does.
func tableFor(need []acctsum.Dim) (int, bool) {
	switch {
	case len(need) == 0:
		return 1 + int(acctsum.ByQueue), true
	case len(need) == 1:
		return 1 + int(need[0]), true
	case !slices.Contains(need, acctsum.ByHost):
		return 0, true
	}
	return 0, false
}

// tableOf is ss summed as table i keeps it (tableFor).
func tableOf(ss acctsum.Sums, i int) acctsum.Sums {
	if i == 0 {
		return ss.Without(acctsum.ByHost)
	}
	return ss.Only(acctsum.Dims[i-1])
}

// table decodes the cached table i (once: it replaces sums).
func (s *Summary) table(i int) (acctsum.Sums, bool) {
	var t table
	if msgpack.Unmarshal(s.Tables[i], &t) != nil || len(t.Keys) != len(t.Sums) {
		return nil, false
	}
	ss := make(acctsum.Sums, len(t.Keys))
	for i, k := range t.Keys {
		ss[k] = &t.Sums[i]
	}
	s.sums, s.Tables = ss, nil
	return ss, true
}

// cacheVersion changes when summary's meaning does: older caches are
// read again from their logs.
const cacheVersion = 3

// cacheDir is where qacct keeps each file's summary: beside the logs, so
// that a copy of the directory carries its cache.
func cacheDir(dir string) string { return filepath.Join(dir, ".qacct") }

// window is the part of time a report covers: [from, to), zero for open.
type Window struct{ From, To time.Time }

func (w Window) Has(t time.Time) bool {
	return (w.From.IsZero() || !t.Before(w.From)) && (w.To.IsZero() || t.Before(w.To))
}

// covers reports whether every record of f's day is inside w, and
// misses whether none is.
func (w Window) Covers(f DayFile) (all, none bool) {
	if f.Day.IsZero() {
		return w.From.IsZero() && w.To.IsZero(), false
	}
	end := f.Day.AddDate(0, 0, 1)
	all = (w.From.IsZero() || !f.Day.Before(w.From)) && (w.To.IsZero() || !end.After(w.To))
	none = !w.From.IsZero() && !end.After(w.From) || !w.To.IsZero() && !f.Day.Before(w.To)
	return all, none
}

// summarize gives every file's summary over w, from the cache where a
// whole day is in w, the cache is the file's and one of its tables
// answers need, otherwise by reading it (and caching what it read, when
// the directory lets it). Files are read on every cpu.
func Summarize(files []DayFile, dir string, w Window, need []acctsum.Dim, loc *time.Location) []*Summary {
	out := make([]*Summary, len(files))
	work := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i] = summarizeOne(files[i], dir, w, need, loc)
			}
		}()
	}
	for i, f := range files {
		if _, none := w.Covers(f); none {
			out[i] = &Summary{sums: acctsum.Sums{}}
			continue
		}
		work <- i
	}
	close(work)
	wg.Wait()
	return out
}

func summarizeOne(f DayFile, dir string, w Window, need []acctsum.Dim, loc *time.Location) *Summary {
	st, err := os.Stat(f.Path)
	if err != nil {
		return &Summary{sums: acctsum.Sums{}, Unread: err.Error()}
	}
	whole, _ := w.Covers(f)
	cache := filepath.Join(cacheDir(dir), filepath.Base(f.Path)+".sum")
	if whole {
		if s := readCache(cache, st); s != nil {
			if _, ok := s.View(need); ok {
				return s
			}
		}
	}
	s, err := readLog(f.Path, loc, func(t time.Time) bool { return whole || w.Has(t) })
	if err != nil {
		return &Summary{sums: acctsum.Sums{}, Unread: err.Error()}
	}
	s.Size, s.Mod = st.Size(), st.ModTime().UnixNano()
	if whole {
		writeCache(cache, s)
	}
	// Only what the report groups by stays in memory: a year of logs
	// holds nearly as many whole keys as jobs.
	if i, ok := tableFor(need); ok {
		s.sums = tableOf(s.sums, i)
	}
	return s
}

// readCache is the cached summary of the file st describes, nil when
// there is none or it is not of the file as it is now.
func readCache(path string, st os.FileInfo) *Summary {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var s Summary
	if msgpack.Unmarshal(b, &s) != nil || s.Version != cacheVersion || s.Size != st.Size() || s.Mod != st.ModTime().UnixNano() || len(s.Tables) != 1+len(acctsum.Dims) {
		return nil
	}
	return &s
}

// writeCache keeps s for next time; a directory qacct may not write to
// (a user's run over root's logs) keeps none.
func writeCache(path string, s *Summary) {
	s.Version = cacheVersion
	s.Tables = nil
	for i := range 1 + len(acctsum.Dims) {
		ss := tableOf(s.sums, i)
		var t table
		for k, sum := range ss {
			t.Keys = append(t.Keys, k)
			t.Sums = append(t.Sums, *sum)
		}
		b, err := msgpack.Marshal(t)
		if err != nil {
			return
		}
		s.Tables = append(s.Tables, b)
	}
	b, err := msgpack.Marshal(s)
	s.Tables = nil
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	if atomicfile.Write(path, b, 0o644) != nil {
		return
	}
	writeSeqIndex(strings.TrimSuffix(path, ".sum")+".seq", s)
}

// writeSeqIndex keeps s's job-number range at path (when it may).
func writeSeqIndex(path string, s *Summary) {
	if ix, err := msgpack.Marshal(&seqIndex{Size: s.Size, Mod: s.Mod, MinSeq: s.MinSeq, MaxSeq: s.MaxSeq}); err == nil {
		atomicfile.Write(path, ix, 0o644)
	}
}

// seqIndex is a day's job-number range, kept beside its summary in a file
// of a few bytes, so that finding one job (FindJob, the server's qstat -x
// of an old job) reads no summary.
type seqIndex struct {
	_msgpack       struct{} `msgpack:",as_array"`
	Size, Mod      int64
	MinSeq, MaxSeq int64
}

func seqIndexPath(dir string, f DayFile) string {
	return filepath.Join(cacheDir(dir), filepath.Base(f.Path)+".seq")
}

// readSeqIndex is the range of the log at logPath as its index keeps it,
// as a summary with only that; nil when the index is missing or not of
// the log as it is now.
func readSeqIndex(path, logPath string) *Summary {
	st, err := os.Stat(logPath)
	if err != nil {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 256 {
		return nil
	}
	var ix seqIndex
	if msgpack.Unmarshal(b, &ix) != nil || ix.Size != st.Size() || ix.Mod != st.ModTime().UnixNano() {
		return nil
	}
	return &Summary{Size: ix.Size, Mod: ix.Mod, MinSeq: ix.MinSeq, MaxSeq: ix.MaxSeq, sums: acctsum.Sums{}}
}

// maxLine bounds one record: longer is a damaged line.
const maxLine = 1 << 20

// eachLine calls fn with every line of the log at path (decompressed
// when it is gzip's), with its number; a line longer than maxLine is
// passed as nil.
func EachLine(path string, fn func(n int, line []byte)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReaderSize(f, 256<<10)
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	br := bufio.NewReaderSize(r, 256<<10)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line past the buffer: read to its end, then judge.
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				if len(long) <= maxLine {
					long = append(long, line...)
				}
			}
			line = long
			if len(long) > maxLine {
				line = nil
			}
		}
		if len(line) > 0 || line == nil && err == nil {
			fn(n, line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
}

// readLog reads the log at path: the E records whose time keep passes
// summed, every record's job number in the range.
func readLog(path string, loc *time.Location, keep func(time.Time) bool) (*Summary, error) {
	s := &Summary{sums: acctsum.Sums{}, MinSeq: -1, MaxSeq: -1}
	var scratch []byte
	damaged := func(n int, why string) {
		s.Damaged++
		if s.FirstDamage == "" {
			s.FirstDamage = fmt.Sprintf("%s line %d: %s", filepath.Base(path), n, why)
		}
	}
	err := EachLine(path, func(n int, line []byte) {
		if line == nil {
			damaged(n, fmt.Sprintf("longer than %d bytes", maxLine))
			return
		}
		t := bytes.TrimRight(line, " \t\r\n")
		if len(t) == 0 || t[0] == ';' {
			return
		}
		l, err := accounting.Split(t, loc)
		if err != nil {
			damaged(n, err.Error())
			return
		}
		s.Records++
		if seq, ok := JobSeq(l.ID); ok {
			if s.MinSeq < 0 || seq < s.MinSeq {
				s.MinSeq = seq
			}
			s.MaxSeq = max(s.MaxSeq, seq)
		}
		if l.Kind != accounting.Ended || !keep(l.At) {
			return
		}
		j, err := acctsum.Read(l.ID, l.At.Unix(), l.Body, &scratch)
		if err != nil {
			damaged(n, err.Error())
			return
		}
		s.Ended++
		s.sums.Add(j)
	})
	return s, err
}

// jobSeq is the number a job id begins with ("12" of "12[3].srv").
func JobSeq(id []byte) (int64, bool) {
	i := 0
	for i < len(id) && id[i] >= '0' && id[i] <= '9' {
		i++
	}
	if i == 0 || i > 18 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(id[:i]), 10, 64)
	return n, err == nil
}

// JobQuery is what -j names: a job number, whether the id named an array
// ("12[]", its subjobs too) or one subjob ("12[3]"), and the server when
// given.
type JobQuery struct {
	Seq    int64
	Index  string // "" none, "[]" the whole array, "[3]" one subjob
	Server string
}

func ParseJobQuery(id string) (JobQuery, error) {
	q := JobQuery{}
	rest := id
	if i := strings.IndexByte(rest, '.'); i >= 0 {
		rest, q.Server = rest[:i], rest[i+1:]
	}
	if i := strings.IndexByte(rest, '['); i >= 0 {
		if !strings.HasSuffix(rest, "]") {
			return q, fmt.Errorf("-j %q: want a job id (12, 12.server, 12[] or 12[3])", id)
		}
		rest, q.Index = rest[:i], rest[i:]
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n < 0 {
		return q, fmt.Errorf("-j %q: want a job id (12, 12.server, 12[] or 12[3])", id)
	}
	q.Seq = n
	return q, nil
}

// matches reports whether a record's id is one the query names: the
// job, or for an array every subjob of it unless one is named.
func (q JobQuery) Matches(id []byte) bool {
	s := string(id)
	rest, server, _ := strings.Cut(s, ".")
	if q.Server != "" && server != q.Server {
		return false
	}
	num, index, _ := strings.Cut(rest, "[")
	if num != strconv.FormatInt(q.Seq, 10) {
		return false
	}
	if q.Index == "" || q.Index == "[]" {
		return true
	}
	return "["+index == q.Index
}

// JobRecords is one job's records, in order, and its E records read.
type JobRecords struct {
	ID    string
	Lines []accounting.Line
	Ends  []acctsum.Job
}

// FindJob is every record of the jobs q names, in the files whose job
// numbers cover it (from each day's cache, made where missing), by id in
// the order first seen, with each E record read; and the files'
// summaries, for their damage.
func FindJob(files []DayFile, dir string, q JobQuery, loc *time.Location) ([]string, map[string]*JobRecords, []*Summary) {
	// Each day's job-number range from its small index, the summary only
	// where there is none (it writes one).
	sums := make([]*Summary, len(files))
	var unindexed []int
	for i, f := range files {
		if s := readSeqIndex(seqIndexPath(dir, f), f.Path); s != nil {
			sums[i] = s
		} else {
			unindexed = append(unindexed, i)
		}
	}
	if len(unindexed) > 0 {
		missing := make([]DayFile, len(unindexed))
		for k, i := range unindexed {
			missing[k] = files[i]
		}
		for k, s := range Summarize(missing, dir, Window{}, []acctsum.Dim{}, loc) {
			sums[unindexed[k]] = s
			if s.Unread == "" && s.Size > 0 {
				writeSeqIndex(seqIndexPath(dir, missing[k]), s)
			}
		}
	}
	byID := map[string]*JobRecords{}
	var order []string
	var scratch []byte
	for i, f := range files {
		s := sums[i]
		if s.MinSeq < 0 || q.Seq < s.MinSeq || q.Seq > s.MaxSeq {
			continue
		}
		EachLine(f.Path, func(_ int, line []byte) {
			if line == nil {
				return
			}
			l, err := accounting.Split(bytes.TrimRight(line, " \t\r\n"), loc)
			if err != nil || !q.Matches(l.ID) {
				return
			}
			id := string(l.ID)
			jr := byID[id]
			if jr == nil {
				jr = &JobRecords{ID: id}
				byID[id] = jr
				order = append(order, id)
			}
			l.Body = append([]byte(nil), l.Body...)
			jr.Lines = append(jr.Lines, l)
			if l.Kind == accounting.Ended {
				if j, err := acctsum.Read(l.ID, l.At.Unix(), l.Body, &scratch); err == nil {
					jr.Ends = append(jr.Ends, j)
				}
			}
		})
	}
	return order, byID, sums
}
