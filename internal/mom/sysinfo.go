package mom

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// hostFacts is what the kernel says about this host.
type hostFacts struct {
	Ncpus   int
	Physmem int64 // bytes
	Loadave float64
}

// readHostFacts reads /proc/meminfo and /proc/loadavg.
func readHostFacts() (hostFacts, error) {
	f := hostFacts{Ncpus: runtime.NumCPU()}
	mem, err := os.Open("/proc/meminfo")
	if err != nil {
		return f, fmt.Errorf("physmem: %w", err)
	}
	defer mem.Close()
	if f.Physmem, err = parseMemTotal(mem); err != nil {
		return f, err
	}
	load, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return f, fmt.Errorf("loadave: %w", err)
	}
	f.Loadave, err = parseLoadavg(string(load))
	return f, err
}

// parseMemTotal finds "MemTotal: N kB" in /proc/meminfo.
func parseMemTotal(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("MemTotal %q: %w", fields[1], err)
			}
			return kb * 1024, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("MemTotal not found in /proc/meminfo")
}

// parseLoadavg reads the one-minute load average.
func parseLoadavg(s string) (float64, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return 0, errors.New("empty /proc/loadavg")
	}
	return strconv.ParseFloat(fields[0], 64)
}

// procStat is the part of /proc/<pid>/stat the mom uses.
type procStat struct {
	PID     int
	PPID    int
	PGRP    int
	Session int
	// Ticks of user+system time of the process and its reaped children.
	CPUTicks int64
	RSSPages int64
	VSize    int64
}

// parseProcStat parses one /proc/<pid>/stat line. The command name is in
// parentheses and may itself contain spaces and parentheses, so fields are
// counted from the last ')'.
func parseProcStat(s string) (procStat, error) {
	var p procStat
	open := strings.IndexByte(s, '(')
	end := strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return p, errors.New("malformed stat line")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return p, fmt.Errorf("pid: %w", err)
	}
	p.PID = pid
	f := strings.Fields(s[end+1:])
	// f[0] is the state; field n of proc(5) is f[n-3].
	if len(f) < 22 {
		return p, errors.New("short stat line")
	}
	num := func(n int) int64 {
		v, _ := strconv.ParseInt(f[n-3], 10, 64)
		return v
	}
	p.PPID = int(num(4))
	p.PGRP = int(num(5))
	p.Session = int(num(6))
	p.CPUTicks = num(14) + num(15) + num(16) + num(17)
	p.VSize = num(23)
	p.RSSPages = num(24)
	return p, nil
}

// sessionProcesses lists the processes of session sid, without the
// session leader itself (the shepherd).
func sessionProcesses(sid int) []procStat { return sessionsProcesses(map[int]bool{sid: true})[sid] }

// sessionsProcesses lists the processes of each session of sids, without
// the session leaders, reading /proc once whatever the number of sessions
// (a mom samples all its jobs in one pass).
func sessionsProcesses(sids map[int]bool) map[int][]procStat {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := map[int][]procStat{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || sids[pid] {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		p, err := parseProcStat(string(b))
		if err == nil && sids[p.Session] {
			out[p.Session] = append(out[p.Session], p)
		}
	}
	return out
}

// clockTicks is USER_HZ, which Linux fixes at 100 for /proc.
const clockTicks = 100

// pageSize converts RSS pages to bytes.
var pageSize = int64(os.Getpagesize())
