package schedpriv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// UsageFile is the name of the fair-share usage file in sched_priv.
const UsageFile = "usage"

// UsageVersion is the format version Encode writes and Decode reads.
const UsageVersion = 1

// usageMagic starts every usage file, followed by a space and the version.
const usageMagic = "gopbs-usage"

// Usage is the fair-share usage of each entity (user or group name), the
// part of the fair-share state that survives a scheduler restart.
type Usage map[string]float64

// Encode writes u in the usage file format, version 1:
//
//	gopbs-usage 1
//	<name>\t<usage>
//	...
//
// one entity per line in name order, usage as a decimal number that reads
// back exactly. Names are escaped so that any byte string works, whatever
// its length: '%', control characters (tab and newline among them) and DEL
// are written as %XX. The classic file was a native struct with a 9-byte
// name field that longer names overflowed. Names must not be empty and
// usage must be finite and non-negative.
func Encode(w io.Writer, u Usage) error {
	names := make([]string, 0, len(u))
	for n, v := range u {
		if n == "" {
			return errors.New("usage: empty entity name")
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("usage: %q has invalid usage %v", n, v)
		}
		names = append(names, n)
	}
	slices.Sort(names)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s %d\n", usageMagic, UsageVersion)
	for _, n := range names {
		bw.WriteString(escapeName(n))
		bw.WriteByte('\t')
		bw.WriteString(strconv.FormatFloat(u[n], 'g', -1, 64))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Decode reads a usage file written by Encode. name is used in messages. A
// file of another version, or not a usage file of ours at all (such as the
// classic binary one), is rejected with an error saying so; a damaged line
// is an error naming the line.
func Decode(r io.Reader, name string) (Usage, error) {
	br := bufio.NewReader(r)
	head, err := br.ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && head != "") {
		if errors.Is(err, io.EOF) {
			return nil, Errors{{File: name, Msg: "empty file, not a gopbs usage file"}}
		}
		return nil, Errors{{File: name, Msg: fmt.Sprintf("read error: %v", err)}}
	}
	head = strings.TrimSuffix(head, "\n")
	ver, ok := strings.CutPrefix(head, usageMagic+" ")
	if !ok {
		return nil, Errors{{File: name, Line: 1, Msg: "not a gopbs usage file (no \"gopbs-usage\" header)"}}
	}
	if ver != strconv.Itoa(UsageVersion) {
		return nil, Errors{{File: name, Line: 1, Msg: fmt.Sprintf("usage file version %q is not supported (this program reads version %d)", ver, UsageVersion)}}
	}
	rep := report{file: name}
	u := Usage{}
	lines := map[string]int{}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 4096), 4*maxLine)
	n := 1
	for sc.Scan() {
		n++
		line := sc.Text()
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
	if err := sc.Err(); err != nil {
		rep.errorf(n+1, "read error: %v", err)
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
