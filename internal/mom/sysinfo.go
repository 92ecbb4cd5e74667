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
