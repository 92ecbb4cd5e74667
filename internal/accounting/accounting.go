// Package accounting writes PBS accounting records to
// server_priv/accounting/YYYYMMDD in OpenPBS's format:
//
//	MM/DD/YYYY HH:MM:SS;<type>;<job id>;key=value key=value ...
//
// Record types: Q queued, S started, E ended, D deleted, A aborted, R rerun,
// u updated, z suspended, r resumed, C checkpointed, n a multi-node job's
// usage on one node; for reservations U, Y, B, F, K and k.
package accounting

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Record types.
const (
	Queued  = 'Q'
	Started = 'S'
	Ended   = 'E'
	Deleted = 'D'
	Aborted = 'A'
	Rerun   = 'R'
	Update  = 'u' // a running job's allocation changed (OpenPBS's pbs_release_nodes record)
	// Preemption's records, as OpenPBS writes them: a job suspended (its
	// usage so far and the resources it gave back), resumed, and
	// checkpointed (then requeued).
	Suspended    = 'z'
	Resumed      = 'r'
	Checkpointed = 'C'
	// A reservation's records, OpenPBS's: it enters unconfirmed, is
	// confirmed, its period begins, the scheduler or the server removes
	// it (denied, not confirmed in time, its period over) or another
	// client than its owner deletes it, its owner deletes it. F (period
	// finished) is OpenPBS's name for a record neither it nor we write:
	// a period's end is a K.
	ResvUnconfirmed = 'U'
	ResvConfirmed   = 'Y'
	ResvBegin       = 'B'
	ResvFinished    = 'F'
	ResvRemoved     = 'K'
	ResvDeleted     = 'k'
	// NodeUsage follows the E record of a job that ran on several nodes:
	// one for each node, with what the job used there (not OpenPBS's).
	NodeUsage = 'n'
)

// Writer appends records to the day's file. Records are written with one
// write call each, after the state they describe is durable; they are
// not fsynced (accounting follows the store, not the other way round).
type Writer struct {
	dir string
	mu  sync.Mutex
	day string
	f   *os.File
}

// New creates the accounting directory if needed.
func New(dir string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("accounting directory: %w", err)
	}
	return &Writer{dir: dir}, nil
}

// KV is one key=value of a record, in order.
type KV struct{ Key, Value string }

// Format renders one record line (with its newline). A record is always
// one line that reads back unambiguously: line breaks in values become
// blanks; a value holding a blank, a quote or a backslash is quoted, with
// '"' and '\' escaped by a backslash; the id and the keys (which the
// server makes or validates) have any character that could end a field or
// the line replaced by '_', so no value can forge another record.
func Format(at time.Time, kind byte, id string, kvs []KV) string {
	return string(appendRecord(nil, at.Format(stampLayout), kind, id, kvs))
}

// stampLayout is a record's time.
const stampLayout = "01/02/2006 15:04:05"

// appendRecord appends Format's line with its time already formatted.
// Values without a character to replace are appended as they are (the
// common case: a start of fifty thousand jobs writes a million values).
func appendRecord(b []byte, stamp string, kind byte, id string, kvs []KV) []byte {
	b = append(b, stamp...)
	b = append(b, ';', kind, ';')
	b = appendReplaced(b, id, fieldSafe, ";\n\r\x00")
	b = append(b, ';')
	for i, kv := range kvs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendReplaced(b, kv.Key, keySafe, ";\n\r\x00 =\"")
		b = append(b, '=')
		v := kv.Value
		if strings.ContainsAny(v, "\r\n\x00") {
			v = lineBreaks.Replace(v)
		}
		if strings.ContainsAny(v, ` "\`) {
			b = append(append(append(b, '"'), quoted.Replace(v)...), '"')
		} else {
			b = append(b, v...)
		}
	}
	if kind == Ended {
		// OpenPBS ends an E record with its last value, every other
		// record with a blank.
		return append(b, '\n')
	}
	return append(b, " \n"...)
}

// appendReplaced appends s through r, which only replaces the characters
// of special.
func appendReplaced(b []byte, s string, r *strings.Replacer, special string) []byte {
	if strings.ContainsAny(s, special) {
		return append(b, r.Replace(s)...)
	}
	return append(b, s...)
}

var (
	lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\x00", " ")
	quoted     = strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	fieldSafe  = strings.NewReplacer(";", "_", "\n", "_", "\r", "_", "\x00", "_")
	keySafe    = strings.NewReplacer(";", "_", "\n", "_", "\r", "_", "\x00", "_", " ", "_", "=", "_", `"`, "_")
)

// Record is one accounting record.
type Record struct {
	Kind byte
	ID   string
	KVs  []KV
}

// FormatText renders a record whose body is a free text, OpenPBS's A
// (a job the server deleted, and why): line breaks become blanks.
func FormatText(at time.Time, kind byte, id, text string) string {
	b := append([]byte(at.Format(stampLayout)), ';', kind, ';')
	b = appendReplaced(b, id, fieldSafe, ";\n\r\x00")
	b = append(b, ';')
	return string(append(append(b, lineBreaks.Replace(text)...), '\n'))
}

// WriteText appends a record with a free text body stamped at.
func (w *Writer) WriteText(at time.Time, kind byte, id, text string) error {
	return w.writeLine(at, []byte(FormatText(at, kind, id, text)))
}

// Write appends a record stamped at.
func (w *Writer) Write(at time.Time, kind byte, id string, kvs []KV) error {
	return w.WriteAll(at, []Record{{kind, id, kvs}})
}

// WriteAll appends several records stamped at with one write.
func (w *Writer) WriteAll(at time.Time, recs []Record) error {
	stamp := at.Format(stampLayout)
	var line []byte
	for i, r := range recs {
		line = appendRecord(line, stamp, r.Kind, r.ID, r.KVs)
		if i == 0 {
			// The others are much the same size.
			line = append(make([]byte, 0, len(line)*len(recs)+len(line)), line...)
		}
	}
	return w.writeLine(at, line)
}

// writeLine appends line to at's day file.
func (w *Writer) writeLine(at time.Time, line []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	day := at.Format("20060102")
	if w.f == nil || day != w.day {
		if w.f != nil {
			w.f.Close()
		}
		f, err := os.OpenFile(filepath.Join(w.dir, day), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("accounting: %w", err)
		}
		w.f, w.day = f, day
	}
	_, err := w.f.Write(line)
	return err
}

// Close closes the current file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
