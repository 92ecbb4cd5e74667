package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/events"
)

// Feed is the server's stream of committed job changes (internal/events),
// as a viewer may have it.
type Feed interface {
	// Subscribe opens v's stream of changes: with resume, those after
	// sequence number after (0: every change kept), else those from now;
	// with room for buffer changes; may re-checks each
	// change against v's rights as they stand when it is sent (setting
	// query_other_jobs false takes effect at once). A resume whose
	// changes are no longer kept fails with events.ErrGap.
	Subscribe(v Viewer, resume bool, after uint64, buffer int) (sub *events.Sub, may func(*events.Event) bool, err error)
	// Last is the sequence number of the last change (0: none yet).
	Last() uint64
}

// Event stream settings.
const (
	// liveBuffer is how many changes a page may fall behind before it is
	// cut off (it then reconnects and reads everything afresh).
	liveBuffer = 1024
	// liveHeartbeat is how often an idle stream says it is alive, so
	// that proxies keep it and the page sees a dead one.
	liveHeartbeat = 15 * time.Second
	// liveBatch is how many changes go out in one write at most.
	liveBatch = 256
)

// live reports whether the page gets live updates.
func (s *Server) live() bool { return s.cfg.Feed != nil }

// lastEvent is the feed's last sequence number (0 without a feed).
func (s *Server) lastEvent() uint64 {
	if s.cfg.Feed == nil {
		return 0
	}
	return s.cfg.Feed.Last()
}

// liveEvent is one change as the page reads it (event "job").
type liveEvent struct {
	Seq        uint64 `json:"seq"`
	Time       int64  `json:"time"` // Unix milliseconds
	Job        string `json:"job"`
	Owner      string `json:"owner"`
	Queue      string `json:"queue"`
	State      string `json:"state"`
	Substate   string `json:"substate"`
	ExitStatus *int   `json:"exit_status,omitempty"`
	Comment    string `json:"comment,omitempty"`
}

// events serves /ui/events: Server-Sent Events, "job" events with the
// change's sequence number as id; a client that reconnects with
// Last-Event-ID resumes after it, or gets a "reset" event when the
// changes since are no longer kept (it then reads everything afresh).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	v, ok := s.admitted(w, r)
	if !ok {
		return
	}
	if s.cfg.Feed == nil {
		writeError(w, http.StatusNotFound, "this server has no event stream", 0)
		return
	}
	if !s.cfg.Source.Rights(v).See {
		writeError(w, http.StatusForbidden, "this server shows nothing to this viewer", 0)
		return
	}
	// One viewer's streams are bounded, so that one user (or every local
	// user together, anonymously) cannot hold the whole budget.
	key := streamKey(r, v)
	if !s.streams.take(key, streamsPerViewer) {
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf("%d event streams open for this viewer already (close a tab)", streamsPerViewer), 0)
		return
	}
	defer s.streams.give(key)
	var after uint64
	id := strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if id != "" {
		n, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "Last-Event-ID: want a sequence number", 0)
			return
		}
		after = n
	}
	sub, may, err := s.cfg.Feed.Subscribe(v, id != "", after, liveBuffer)
	reset := ""
	if errors.Is(err, events.ErrGap) {
		reset = err.Error()
		sub, may, err = s.cfg.Feed.Subscribe(v, false, 0, liveBuffer)
	}
	if err != nil {
		writeAnyError(w, err)
		return
	}
	defer sub.Close()
	rc := http.NewResponseController(w)
	// The stream outlives the listener's read timeout: the request was
	// read whole, and a read deadline would cancel it.
	rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var b strings.Builder
	b.WriteString("retry: 1000\n\n")
	if reset != "" {
		fmt.Fprintf(&b, "event: reset\ndata: %s\n\n", mustJSON(map[string]string{"why": reset}))
	}
	write := func() bool {
		// Each write gets its own deadline: a page that stops reading
		// is dropped, and its subscription with it.
		rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		_, err := w.Write([]byte(b.String()))
		b.Reset()
		return err == nil && rc.Flush() == nil
	}
	if !write() {
		return
	}
	anonymous := v.Anonymous()
	add := func(e *events.Event) {
		if !may(e) {
			return
		}
		le := liveEvent{Seq: e.Seq, Time: e.Time, Job: e.JobID, Owner: e.Owner, Queue: e.Queue, State: e.State, Substate: e.Substate, ExitStatus: e.ExitStatus, Comment: e.Comment}
		if anonymous {
			le.Comment = "" // comments may name paths and hosts
		}
		fmt.Fprintf(&b, "id: %d\nevent: job\ndata: %s\n\n", e.Seq, mustJSON(le))
	}
	heartbeat := time.NewTicker(liveHeartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case e, ok := <-sub.C:
			if !ok {
				if err := sub.Err(); err != nil {
					s.log.Debug("event stream ended", "viewer", v.User, "reason", err)
				}
				return
			}
			add(&e)
		more:
			for i := 1; i < liveBatch; i++ {
				select {
				case e, ok := <-sub.C:
					if !ok {
						break more
					}
					add(&e)
				default:
					break more
				}
			}
			if b.Len() > 0 && !write() {
				return
			}
		case <-heartbeat.C:
			b.WriteString(": ping\n\n")
			if !write() {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}

func mustJSON(v any) []byte {
	out, err := json.Marshal(v)
	if err != nil {
		return []byte("{}")
	}
	return out
}
