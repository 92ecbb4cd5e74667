// The node health check: Torque's $node_check_script, an admin's program
// the mom runs to tell whether this host should take jobs.
//
//   - $node_check_script <absolute path> names the program. It is held to
//     the prologue's rules and run the same way (shepherd.RunSiteProgram):
//     as the mom's user (root), a file of that user not writable by its
//     group or others, argv and never a shell, no arguments, in mom_priv
//     with the mom's environment, killed with its session after
//     nodeCheckTimeout.
//   - $node_check_interval <N>[,jobstart][,jobend] is Torque's syntax. N
//     counts the mom's status reports (Torque's "MOM intervals"): the
//     check runs at start, before the first report, and then every N
//     report intervals (the interval is the server's node_check_rate / 3,
//     20 seconds by default). N is 1 when the line is absent; 0, or a line
//     of keywords only (as Torque reads one), runs it never periodically,
//     except again every interval after it failed, until it passes.
//     jobstart also runs it before the jobs of each start request, jobend
//     after jobs end; their ends are reported after the verdict.
//   - A run fails when it exits non-zero, is refused, cannot start or is
//     killed at its time limit, or when a line of its standard output
//     starts with ERROR (in any case, as Torque 6 reads it). The verdict
//     is the first such line (at most healthMax bytes), else a sentence
//     saying what went wrong; "" is healthy.
//   - Every status report carries the last verdict (proto.MomStatus.Health):
//     the server takes the node offline with the verdict as its comment,
//     and back online when the check passes, only when the check was what
//     took it offline.
//   - A failed jobstart check refuses the request's new jobs, which go
//     back to their queues; the mom answers once the server has answered
//     a report carrying the verdict (within healthReportWait), so the next
//     cycle already finds the node offline. A failed jobend check reaches
//     the server before the ends do, for the same reason; status reports
//     go on meanwhile (a slow check must not have the node taken for
//     down).
//
// Locking: checkMu is held for the length of a run and the recording of
// its verdict (one run at a time); health, healthSeq, reportedSeq,
// reported and each momJob's endCheck are guarded by Mom.mu.

package mom

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/proto"
)

// NodeCheckConfig is the node health check of mom_priv/config.
type NodeCheckConfig struct {
	// Script is $node_check_script ("" for no check).
	Script string
	// Every is how many status report intervals pass between periodic
	// checks (0: none).
	Every int
	// JobStart and JobEnd are $node_check_interval's jobstart and jobend.
	JobStart bool
	JobEnd   bool
}

// maxNodeCheckEvery bounds $node_check_interval's number.
const maxNodeCheckEvery = 10000

// parseNodeCheckInterval reads $node_check_interval's value: a number of
// report intervals and the keywords jobstart and jobend, separated by
// commas, in any order. Without a number the check runs only at the
// events named (Torque reads such a line as the number 0).
func parseNodeCheckInterval(value string) (every int, jobStart, jobEnd bool, err error) {
	number := false
	for _, item := range strings.Split(value, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "jobstart":
			jobStart = true
		case item == "jobend":
			jobEnd = true
		case item != "" && item[0] >= '0' && item[0] <= '9':
			n, perr := strconv.Atoi(item)
			if perr != nil || n > maxNodeCheckEvery || number {
				return 0, false, false, fmt.Errorf("$node_check_interval %q: want one number of report intervals from 0 to %d", value, maxNodeCheckEvery)
			}
			every, number = n, true
		default:
			return 0, false, false, fmt.Errorf("$node_check_interval %q: %q is neither a number of report intervals nor jobstart or jobend", value, item)
		}
	}
	return every, jobStart, jobEnd, nil
}

// nodeCheckTimeout bounds one run of the check. A job start waits for it,
// and the server waits 15 seconds for a mom's answer to a start.
const nodeCheckTimeout = 10 * time.Second

// healthReportWait bounds how long a start refused by the check waits
// for the server to have the report that offlines the node.
const healthReportWait = 3 * time.Second

// firstAnswerWait bounds how long the periodic checks wait for the
// server's first answer (which sets the report interval) before counting
// intervals of the default length.
const firstAnswerWait = time.Minute

// healthMax bounds a verdict taken from the check's output (Torque's
// message is at most 1024 characters).
const healthMax = 1024

// checkOutputMax is how much of the check's output is read.
const checkOutputMax = 64 << 10

// verdict reads a run of the node check at path: "" when it passed,
// else the first line of its standard output (stdout) that starts with
// ERROR, or what went wrong.
func verdict(path string, run shepherd.ProgramRun, stdout []byte) string {
	if line, ok := errorLine(stdout); ok {
		return line
	}
	switch {
	case !run.Found:
		return "node check " + path + " does not exist"
	case run.Why != "":
		return "node check " + path + ": " + run.Why
	case run.Code != 0:
		return "node check " + path + " exited " + strconv.Itoa(run.Code)
	}
	return ""
}

// errorLine finds the first line of out that starts with ERROR, in any
// case, and returns it fit for a node's comment: valid UTF-8, control
// characters made blanks, at most healthMax bytes.
func errorLine(out []byte) (string, bool) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 4096), checkOutputMax)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) < 5 || !bytes.EqualFold(line[:5], []byte("ERROR")) {
			continue
		}
		return printableLine(line), true
	}
	return "", false
}

// printableLine is line as valid UTF-8 without control characters,
// trimmed, cut to healthMax bytes at a character's start.
func printableLine(line []byte) string {
	s := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(string(line), "?"))
	if len(s) > healthMax {
		cut := healthMax
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return strings.TrimSpace(s)
}

// runNodeCheck runs the check at path in dir, at most limit, and returns
// its verdict and the start of what it wrote to its standard error (for
// the log).
func runNodeCheck(path, dir string, limit time.Duration) (health, stderr string) {
	out, err := scratchFile(dir)
	if err != nil {
		return "node check " + path + ": " + err.Error(), ""
	}
	defer out.Close()
	errf, err := scratchFile(dir)
	if err != nil {
		return "node check " + path + ": " + err.Error(), ""
	}
	defer errf.Close()
	run := shepherd.RunSiteProgram(shepherd.SiteProgram{Path: path, Dir: dir, Stdout: out, Stderr: errf,
		Limit: limit, LimitName: "the node check's time limit"})
	return verdict(path, run, head(out)), printableLine(bytes.SplitN(head(errf), []byte("\n"), 2)[0])
}

// scratchFile is an unlinked file in dir for a check's output: a file
// rather than a pipe, so that a process the check leaves behind holding
// it open cannot keep the mom waiting.
func scratchFile(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, ".nodecheck-*")
	if err != nil {
		return nil, fmt.Errorf("cannot make its output file: %w", err)
	}
	os.Remove(f.Name())
	return f, nil
}

// head reads the first checkOutputMax bytes of f.
func head(f *os.File) []byte {
	b, _ := io.ReadAll(io.NewSectionReader(f, 0, checkOutputMax))
	return b
}

// nodeCheck runs the check now and records its verdict; when (periodic,
// jobstart, jobend) is for the log. It returns the verdict and its
// sequence number, for awaitReport.
func (m *Mom) nodeCheck(when string) (health string, seq uint64) {
	m.checkMu.Lock()
	defer m.checkMu.Unlock()
	health, stderr := runNodeCheck(m.mc().NodeCheck.Script, filepath.Join(m.cfg.Home, "mom_priv"), nodeCheckTimeout)
	m.mu.Lock()
	was := m.health
	m.health = health
	m.healthSeq++
	seq = m.healthSeq
	m.mu.Unlock()
	switch {
	case health != "" && health != was:
		m.log.Warn("node check failed: the server is told to take the node offline", "when", when, "message", health, "stderr", stderr)
	case health == "" && was != "":
		m.log.Info("node check passes again", "when", when)
	case health != "":
		m.log.Debug("node check still fails", "when", when, "message", health)
	}
	if health != was {
		m.wakeLink()
	}
	return health, seq
}

// nodeChecks runs the checks other than jobstart's until the mom stops.
// The periodic one runs at once (firstCheck is closed after that run,
// which the server link waits for), then every NodeCheck.Every report
// intervals, counted from the server's answer to the first report (which
// says how long they are). Without periodic checks (Every 0) a failed
// check is run again every interval until it passes: nothing else would
// bring the node back. The jobend check runs when the server link asks
// (endCheck).
func (m *Mom) nodeChecks() {
	defer m.wg.Done()
	every := m.mc().NodeCheck.Every
	if every > 0 {
		_, seq := m.nodeCheck("periodic")
		close(m.firstCheck)
		m.awaitReport(seq, firstAnswerWait)
	}
	ticks := 0
	tick := time.NewTimer(m.reportInterval())
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-m.endCheck:
			m.checkEnds()
			continue
		case <-tick.C:
		}
		tick.Reset(m.reportInterval())
		ticks++
		m.mu.Lock()
		failing := m.health != ""
		m.mu.Unlock()
		if every > 0 && ticks >= every || every == 0 && failing {
			m.nodeCheck("periodic")
			ticks = 0
		}
	}
}

// reportInterval is how often the server wants reports.
func (m *Mom) reportInterval() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.interval
}

// checkBeforeStart runs the jobstart check for a start request when it
// has a job not already running here: "" when the jobs may start, else
// the check's verdict, once the server has had a report carrying it (or
// healthReportWait passed).
func (m *Mom) checkBeforeStart(jobs []proto.MomJob) string {
	nc := m.mc().NodeCheck
	if nc.Script == "" || !nc.JobStart {
		return ""
	}
	fresh := false
	for i := range jobs {
		if m.newRun(&jobs[i]) {
			fresh = true
			break
		}
	}
	if !fresh {
		return ""
	}
	health, seq := m.nodeCheck("jobstart")
	if health == "" {
		return ""
	}
	m.wakeLink()
	if !m.awaitReport(seq, healthReportWait) {
		m.log.Warn("refusing jobs on a failed node check before the server has heard of it", "message", health)
	}
	return health
}

// newRun reports whether job is not the run of it already here (a
// repeated start request is accepted without a check: its job runs).
func (m *Mom) newRun(job *proto.MomJob) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.jobs[job.JobID]
	return !ok || old.spec.RunCount != job.RunCount
}

// checksEnds reports whether the jobend check is configured.
func (m *Mom) checksEnds() bool {
	return m.mc().NodeCheck.Script != "" && m.mc().NodeCheck.JobEnd
}

// askEndCheck asks for the jobend check when a job ended that no check
// has followed; the server link calls it before reporting ends.
func (m *Mom) askEndCheck() {
	if !m.checksEnds() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, j := range m.jobs {
		if j.result != nil && j.endCheck == 0 {
			select {
			case m.endCheck <- struct{}{}:
			default:
			}
			return
		}
	}
}

// checkEnds runs the jobend check for the jobs that ended before it
// starts, records it on them and wakes the server link, which reports
// the verdict and then their ends.
func (m *Mom) checkEnds() {
	var ended []*momJob
	m.mu.Lock()
	for _, j := range m.jobs {
		if j.result != nil && j.endCheck == 0 {
			ended = append(ended, j)
		}
	}
	m.mu.Unlock()
	if len(ended) == 0 {
		return
	}
	_, seq := m.nodeCheck("jobend")
	m.mu.Lock()
	for _, j := range ended {
		j.endCheck = seq
	}
	m.mu.Unlock()
	m.wakeLink()
}

// endReportable reports whether j's end may be reported: without the
// jobend check at once, else once the server has answered a report that
// carried the verdict of a check run after the end (mu held).
func (m *Mom) endReportable(j *momJob, checksEnds bool) bool {
	if !j.woundDown || j.epilogue {
		return false // its tasks and sisters are being ended (windDown), its epilogue hooks run
	}
	return !checksEnds || j.endCheck != 0 && j.endCheck <= m.reportedSeq
}

// awaitReport waits until the server has answered a status report that
// carried the verdict of check seq, at most timeout; false when it has
// not.
func (m *Mom) awaitReport(seq uint64, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		m.mu.Lock()
		done, answered := m.reportedSeq >= seq, m.reported
		m.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-answered:
		case <-deadline.C:
			return false
		case <-m.stop:
			return false
		}
	}
}
