//go:build faultpoints

package fault

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Enabled reports whether this is a fault build.
const Enabled = true

// ErrInjected is returned by Hit at an armed point whose action is error.
var ErrInjected = errors.New("injected fault")

type armed struct {
	action string
	at     int // fire on this hit
	hits   int
}

var (
	mu     sync.Mutex
	points map[string]*armed
)

func init() {
	spec := os.Getenv(EnvVar)
	if spec == "" {
		return
	}
	p, err := Parse(spec)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", EnvVar, err)
		os.Exit(2)
	}
	points = p
	// Children (a mom's shepherds) arm their own points from the same
	// variable; a point fires once per process.
}

// Parse reads a GOPBS_FAULTS value.
func Parse(spec string) (map[string]*armed, error) {
	out := map[string]*armed{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, action, ok := strings.Cut(item, "=")
		if !ok || !slices.Contains(Points, name) {
			return nil, fmt.Errorf("%q: want point=action with a point of %s", item, strings.Join(Points, " "))
		}
		a := &armed{at: 1}
		action, n, hasN := strings.Cut(action, "@")
		if hasN {
			v, err := strconv.Atoi(n)
			if err != nil || v < 1 {
				return nil, fmt.Errorf("%q: the count after @ must be a positive number", item)
			}
			a.at = v
		}
		switch action {
		case "crash", "exit", "error", "stop":
		default:
			return nil, fmt.Errorf("%q: action must be crash, exit, error or stop", item)
		}
		a.action = action
		out[name] = a
	}
	return out, nil
}

// Hit is reached at point; in a fault build it carries out the armed
// action on the armed hit.
func Hit(point string) error {
	if points == nil {
		return nil
	}
	mu.Lock()
	a := points[point]
	fire := false
	if a != nil {
		a.hits++
		fire = a.hits == a.at
	}
	mu.Unlock()
	if !fire {
		return nil
	}
	fmt.Fprintf(os.Stderr, "fault: %s: %s\n", point, a.action)
	switch a.action {
	case "crash":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal arrives
	case "exit":
		os.Exit(3)
	case "stop":
		syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		return nil
	}
	return fmt.Errorf("%w at %s", ErrInjected, point)
}
