package qsub

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gopbs/gopbs/proto"
)

// Waiting for a job submitted with -W block=true (OpenPBS): qsub polls
// the server until the job (or array) is finished and exits with its
// Exit_status. The server keeps no client waiting and needs no callback
// port, so a qsub that dies leaves nothing behind.

// Poll intervals: quick at first (short jobs end soon), then at most
// maxPoll apart.
const (
	firstPoll = 200 * time.Millisecond
	maxPoll   = 5 * time.Second
	// lostServer is how long qsub keeps trying to reach a server that
	// stopped answering (a restart) before it gives up.
	lostServer = 10 * time.Minute
)

// clock is what the wait takes from time, so that tests run it at once.
type clock struct {
	now   func() time.Time
	sleep func(time.Duration)
}

// waitJob polls until job id is finished and returns its exit status.
// client is the connection the job was submitted on; a broken one is
// replaced through connect.
func waitJob(id string, client submitter, connect func() (submitter, error), clk clock) (int, submitter, error) {
	req := &proto.StatusRequest{IDs: []string{id}, Attrs: []string{proto.AttrJobState, proto.AttrExitStatus}, History: true}
	delay := firstPoll
	lastContact := clk.now()
	for {
		st, errs, err := client.StatusJobs(req)
		switch {
		case err == nil && len(errs) > 0:
			if errs[0].Code == proto.PBSE_UNKJOBID {
				return 0, client, proto.Errorf(proto.PBSE_UNKJOBID, "%s (it left no history: job_history_enable is off, or it was purged; its exit status is unknown)", id)
			}
			return 0, client, &proto.Error{Code: errs[0].Code, Text: errs[0].Text}
		case err == nil && len(st) == 1:
			lastContact = clk.now()
			if state, _ := st[0].Get(proto.AttrJobState); state == "F" {
				v, ok := st[0].Get(proto.AttrExitStatus)
				n, perr := strconv.Atoi(v)
				if !ok || perr != nil {
					return 0, client, fmt.Errorf("job %s finished without an exit status", id)
				}
				return n, client, nil
			}
		case err == nil:
			return 0, client, fmt.Errorf("the server answered %d jobs for %s", len(st), id)
		default:
			if code := proto.CodeOf(err); code != proto.PBSE_PROTOCOL && code != proto.PBSE_NOSERVER && code != proto.PBSE_SYSTEM {
				return 0, client, err // a real answer, not a lost connection
			}
			if clk.now().Sub(lastContact) > lostServer {
				return 0, client, proto.Errorf(proto.PBSE_PROTOCOL, "(lost the server while waiting for job %s: %v)", id, err)
			}
			client.Close()
			clk.sleep(delay)
			if c, cerr := connect(); cerr == nil {
				client = c
			}
			delay = min(delay*2, maxPoll)
			continue
		}
		clk.sleep(delay)
		delay = min(delay*2, maxPoll)
	}
}
