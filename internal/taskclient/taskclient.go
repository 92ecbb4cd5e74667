// Package taskclient starts a task of the caller's job through the mom of
// this host (proto/tasks.go) and relays its streams: what pbsdsh and
// pbs_tmrsh share. The caller is inside a job: PBS_JOBID and
// PBS_JOBCOOKIE in its environment say which, and the mom checks them.
package taskclient

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

// Job is the job the caller runs in, from its environment.
type Job struct {
	ID     string
	Cookie string
	Socket string // the local mom's socket
}

// FromEnv finds the caller's job; outside a job it says so.
func FromEnv(cfg *config.Config) (Job, error) {
	j := Job{ID: os.Getenv("PBS_JOBID"), Cookie: os.Getenv("PBS_JOBCOOKIE"), Socket: cfg.MomSocket()}
	if j.ID == "" || j.Cookie == "" {
		return j, errors.New("not inside a PBS job (PBS_JOBID or PBS_JOBCOOKIE is not set)")
	}
	return j, nil
}

// Task is one task to start.
type Task struct {
	Node  string // "" for this node
	Argv  []string
	Shell bool // run by the owner's login shell, as rsh does
	Env   map[string]string
	// Stdin, when not nil, is sent to the task; else it reads /dev/null.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Detach returns once the task started; it runs on without the
	// caller (pbsdsh -o).
	Detach bool
}

// Exit is how a task ended.
type Exit struct {
	Node    string
	Status  int
	Comment string
}

// Run starts t and waits for its end. An error means the task did not
// start (refused, or the mom unreachable), or its mom went away while it
// ran.
func Run(j Job, t Task) (Exit, error) {
	c, err := proto.Dial(proto.DialOptions{Network: "unix", Address: j.Socket, Timeout: 30 * time.Second})
	if err != nil {
		return Exit{}, fmt.Errorf("cannot reach this host's pbs_mom: %w", err)
	}
	defer c.Close()
	if err := c.Hello(); err != nil {
		return Exit{}, err
	}
	conn := c.Conn()
	req := &proto.TaskSpawn{JobID: j.ID, Cookie: j.Cookie, Node: t.Node, Argv: t.Argv, Shell: t.Shell, Env: t.Env, Stdin: t.Stdin != nil, Detach: t.Detach}
	if err := conn.Send(proto.Header{Type: proto.MsgTaskSpawn, Seq: 1}, req); err != nil {
		return Exit{}, err
	}
	h, body, err := conn.Recv()
	if err != nil {
		return Exit{}, fmt.Errorf("pbs_mom: %w", err)
	}
	if h.Code != proto.PBSE_NONE {
		return Exit{}, &proto.Error{Code: h.Code, Text: h.Text}
	}
	var started proto.TaskStarted
	if err := proto.DecodeBody(body, &started); err != nil {
		return Exit{}, err
	}
	if t.Detach {
		return Exit{Node: started.Node}, nil
	}
	if t.Stdin != nil {
		var sendMu sync.Mutex
		go func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := t.Stdin.Read(buf)
				sendMu.Lock()
				if n > 0 {
					conn.Send(proto.Header{Type: proto.MsgTaskData}, &proto.TaskData{Stream: proto.StreamStdin, Data: buf[:n]})
				}
				if err != nil {
					conn.Send(proto.Header{Type: proto.MsgTaskData}, &proto.TaskData{Stream: proto.StreamStdin, EOF: true})
					sendMu.Unlock()
					return
				}
				sendMu.Unlock()
			}
		}()
	}
	for {
		h, body, err := conn.Recv()
		if err != nil {
			return Exit{Node: started.Node}, fmt.Errorf("lost the task on %s: %w", started.Node, err)
		}
		switch h.Type {
		case proto.MsgTaskData:
			var d proto.TaskData
			if err := proto.DecodeBody(body, &d); err != nil {
				return Exit{Node: started.Node}, err
			}
			w := t.Stdout
			if d.Stream == proto.StreamStderr {
				w = t.Stderr
			}
			if w != nil && len(d.Data) > 0 {
				w.Write(d.Data)
			}
		case proto.MsgTaskExit:
			var e proto.TaskExit
			if err := proto.DecodeBody(body, &e); err != nil {
				return Exit{Node: started.Node}, err
			}
			return Exit{Node: started.Node, Status: e.Status, Comment: e.Comment}, nil
		default:
			return Exit{Node: started.Node}, fmt.Errorf("unexpected %s from pbs_mom", h.Type)
		}
	}
}

// LockedWriter serialises writes of several tasks to one stream, each
// write whole.
type LockedWriter struct {
	mu sync.Mutex
	W  io.Writer
}

func (l *LockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.W.Write(p)
}
