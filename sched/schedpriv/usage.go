package schedpriv

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// UsageFile is the name of the fair-share usage file in sched_priv.
const UsageFile = "usage"

// UsageVersion is the format version Encode writes. Decode also reads
// version 1 (entities only, no checksum), which earlier releases wrote.
const UsageVersion = 2

// usageMagic starts every usage file, followed by a space and the version.
const usageMagic = "gopbs-usage"

// Usage is the fair-share usage of each entity (user or group name): cpu
// seconds, decayed.
type Usage map[string]float64

// UsageState is everything of fair share that survives a scheduler
// restart: the usage of each entity, the cpu seconds already counted for
// each job still followed (so that a restarted scheduler counts each
// second once), and when usage was last halved.
type UsageState struct {
	Entities Usage
	Jobs     map[string]float64
	// LastDecay is the Unix time of the last halving (0: never).
	LastDecay int64
}

// NewUsageState returns an empty state.
func NewUsageState() *UsageState {
	return &UsageState{Entities: Usage{}, Jobs: map[string]float64{}}
}

// Encode writes s in the usage file format, version 2:
//
//	gopbs-usage 2
//	decayed<TAB><unix seconds>
//	e<TAB><entity><TAB><usage>     one per entity, in name order
//	j<TAB><job id><TAB><cpu s>     one per followed job, in id order
//	sum<TAB><crc32c of every byte above, 8 hex digits>
//
// Numbers read back exactly. Names are escaped so that any byte string
// works, whatever its length: '%', control characters (tab and newline
// among them) and DEL are written as %XX (the classic file was a native
// struct with a 9-byte name field that longer names overflowed). The sum
// line makes a truncated or damaged file an error rather than a quiet loss
// of usage. Names must not be empty and values must be finite and
// non-negative.
func Encode(w io.Writer, s *UsageState) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %d\n", usageMagic, UsageVersion)
	fmt.Fprintf(&b, "decayed\t%d\n", s.LastDecay)
	if err := encodeSection(&b, "e", s.Entities); err != nil {
		return err
	}
	if err := encodeSection(&b, "j", s.Jobs); err != nil {
		return err
	}
	fmt.Fprintf(&b, "sum\t%08x\n", crc32.Checksum(b.Bytes(), crcTable))
	_, err := w.Write(b.Bytes())
	return err
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func encodeSection(b *bytes.Buffer, tag string, m map[string]float64) error {
	names := make([]string, 0, len(m))
	for n, v := range m {
		if n == "" {
			return errors.New("usage: empty name")
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("usage: %q has invalid value %v", n, v)
		}
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		b.WriteString(tag)
		b.WriteByte('\t')
		b.WriteString(escapeName(n))
		b.WriteByte('\t')
		b.WriteString(strconv.FormatFloat(m[n], 'g', -1, 64))
		b.WriteByte('\n')
	}
	return nil
}

// Decode reads a usage file written by Encode (version 2) or by an earlier
// release (version 1). name is used in messages. A file of another
// version, not a usage file of ours at all (such as the classic binary
// one), truncated or damaged (the checksum does not match) is rejected
// with an error saying so; a bad line is an error naming the line.
func Decode(r io.Reader, name string) (*UsageState, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxUsageFile+1))
	if err != nil {
		return nil, Errors{{File: name, Msg: fmt.Sprintf("read error: %v", err)}}
	}
	if len(data) > maxUsageFile {
		return nil, Errors{{File: name, Msg: fmt.Sprintf("larger than %d bytes", maxUsageFile)}}
	}
	if len(data) == 0 {
		return nil, Errors{{File: name, Msg: "empty file, not a gopbs usage file"}}
	}
	head, body, _ := strings.Cut(string(data), "\n")
	ver, ok := strings.CutPrefix(head, usageMagic+" ")
	if !ok {
		return nil, Errors{{File: name, Line: 1, Msg: "not a gopbs usage file (no \"gopbs-usage\" header)"}}
	}
	switch ver {
	case "1":
		u, err := decodeV1(body, name)
		if err != nil {
			return nil, err
		}
		return &UsageState{Entities: u, Jobs: map[string]float64{}}, nil
	case strconv.Itoa(UsageVersion):
		return decodeV2(data, body, name)
	}
	return nil, Errors{{File: name, Line: 1, Msg: fmt.Sprintf("usage file version %q is not supported (this program reads versions 1 and %d)", ver, UsageVersion)}}
}

// maxUsageFile bounds what Decode reads: a usage file holds one line per
// user and per running job.
const maxUsageFile = 256 << 20

func decodeV2(data []byte, body, name string) (*UsageState, error) {
	// The sum line is last; everything before it is summed.
	text := string(data)
	if !strings.HasSuffix(text, "\n") {
		return nil, Errors{{File: name, Msg: "truncated (no end of line at the end; the file was cut short)"}}
	}
	i := strings.LastIndex(text[:len(text)-1], "\n")
	last := text[i+1 : len(text)-1]
	hex, ok := strings.CutPrefix(last, "sum\t")
	if !ok {
		return nil, Errors{{File: name, Msg: "truncated (no checksum line at the end; the file was cut short)"}}
	}
	want, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || len(hex) != 8 {
		return nil, Errors{{File: name, Msg: fmt.Sprintf("bad checksum line %q", last)}}
	}
	if got := crc32.Checksum(data[:i+1], crcTable); uint64(got) != want {
		return nil, Errors{{File: name, Msg: fmt.Sprintf("damaged: checksum %08x does not match the contents (%08x)", want, got)}}
	}
	body = body[:len(body)-len(last)-1]
	s := NewUsageState()
	rep := report{file: name}
	seen := map[string]int{}
	for n, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		n += 2
		f := strings.Split(line, "\t")
		switch {
		case len(f) == 2 && f[0] == "decayed":
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || v < 0 {
				rep.errorf(n, "bad decay time %q", f[1])
				continue
			}
			s.LastDecay = v
		case len(f) == 3 && (f[0] == "e" || f[0] == "j"):
			id, err := unescapeName(f[1])
			if err != nil || id == "" {
				rep.errorf(n, "bad name %q", f[1])
				continue
			}
			v, err := strconv.ParseFloat(f[2], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				rep.errorf(n, "%s: bad value %q", id, f[2])
				continue
			}
			key := f[0] + "\t" + id
			if prev, dup := seen[key]; dup {
				rep.errorf(n, "%s is already given on line %d", id, prev)
				continue
			}
			seen[key] = n
			if f[0] == "e" {
				s.Entities[id] = v
			} else {
				s.Jobs[id] = v
			}
		default:
			rep.errorf(n, "want \"e|j<TAB>name<TAB>value\" or \"decayed<TAB>time\"")
		}
	}
	if err := rep.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// decodeV1 reads the lines of a version 1 file: "name<TAB>usage".
func decodeV1(body, name string) (Usage, error) {
	rep := report{file: name}
	u := Usage{}
	lines := map[string]int{}
	if body == "" {
		return u, nil
	}
	for n, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		n += 2
		esc, val, ok := strings.Cut(line, "\t")
		if !ok {
			rep.errorf(n, "want \"name<TAB>usage\"")
			continue
		}
		ent, err := unescapeName(esc)
		if err != nil || ent == "" {
			rep.errorf(n, "bad entity name %q", esc)
			continue
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			rep.errorf(n, "%s: bad usage %q", ent, val)
			continue
		}
		if prev, dup := lines[ent]; dup {
			rep.errorf(n, "%s is already given on line %d", ent, prev)
			continue
		}
		lines[ent] = n
		u[ent] = v
	}
	if err := rep.err(); err != nil {
		return nil, err
	}
	return u, nil
}

func needsEscape(c byte) bool { return c == '%' || c < 0x20 || c == 0x7f }

func escapeName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsEscape(c) {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func unescapeName(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			if needsEscape(c) {
				return "", errors.New("unescaped control character")
			}
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("truncated escape")
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", errors.New("bad escape")
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), nil
}
