package accounting

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// Line is one record as read back: its time, its type, the job's (or
// reservation's) id and its body, the key=value pairs (EachKV reads them).
// ID and Body alias the line read.
type Line struct {
	At   time.Time
	Kind byte
	ID   []byte
	Body []byte
}

// ErrNotRecord is a line that is not "date;type;id;message".
var ErrNotRecord = errors.New("not an accounting record (date;type;id;message)")

// Split reads one record line, as Format writes it and OpenPBS does (a
// trailing blank or none), its time in loc. It is the one reader of a
// record's frame: qacct, tracejob and the trace reader use it.
func Split(line []byte, loc *time.Location) (Line, error) {
	t := bytes.TrimRight(line, " \t\r\n")
	stamp, rest, ok1 := bytes.Cut(t, []byte{';'})
	kind, rest, ok2 := bytes.Cut(rest, []byte{';'})
	id, body, _ := bytes.Cut(rest, []byte{';'})
	if !ok1 || !ok2 || len(kind) != 1 {
		return Line{}, ErrNotRecord
	}
	at, err := time.ParseInLocation(stampLayout, string(stamp), loc)
	if err != nil {
		return Line{}, fmt.Errorf("bad date %q", stamp)
	}
	return Line{At: at, Kind: kind[0], ID: id, Body: body}, nil
}

// errKV is a body that is not key=value ... .
var errKV = errors.New("want key=value")

// EachKV calls fn with every key=value of a record body, in order: a
// value is bare (up to the next blank) or in double quotes with \" and \\
// escaped, exactly as Format writes a value holding a blank, a quote or a
// backslash. Single quotes are ordinary characters (OpenPBS's '{}' reads
// as '{}'): a bare value this server writes may begin with one. The value
// passed to fn is valid only during the call; scratch holds unquoted
// values between calls.
func EachKV(b []byte, scratch *[]byte, fn func(k, v []byte) error) error {
	for {
		b = bytes.TrimLeft(b, " ")
		if len(b) == 0 {
			return nil
		}
		eq := bytes.IndexByte(b, '=')
		sp := bytes.IndexByte(b, ' ')
		if eq <= 0 || sp >= 0 && sp < eq || bytes.IndexByte(b[:eq], '"') >= 0 {
			tok := b
			if sp >= 0 {
				tok = b[:sp]
			}
			return fmt.Errorf("%w, got %q", errKV, tok)
		}
		k := b[:eq]
		b = b[eq+1:]
		var v []byte
		switch {
		case len(b) > 0 && b[0] == '"':
			buf := (*scratch)[:0]
			i := 1
			for ; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' && i+1 < len(b) && (b[i+1] == '"' || b[i+1] == '\\') {
					i++
				}
				buf = append(buf, b[i])
			}
			if i >= len(b) {
				return fmt.Errorf("%s: unterminated quoted value", k)
			}
			v, *scratch, b = buf, buf, b[i+1:]
		default:
			j := bytes.IndexByte(b, ' ')
			if j < 0 {
				j = len(b)
			}
			v, b = b[:j], b[j:]
		}
		if len(b) > 0 && b[0] != ' ' {
			return fmt.Errorf("%s: text after the closing quote", k)
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
}
