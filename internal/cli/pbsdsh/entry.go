// Package pbsdsh is pbsdsh's logic; cmd/pbsdsh documents the command.
package pbsdsh

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/internal/taskclient"
)

const usage = "usage: pbsdsh [-c copies | -n node_index] [-s] [-v] [-o] [--] program [arg...]"

// Main is pbsdsh's whole main (cmd/pbsdsh calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() { os.Exit(run(os.Args[1:])) }

// options are pbsdsh's command line.
type options struct {
	copies  int // -c; 0 for one per node entry
	index   int // -n; -1 for none
	seq     bool
	verbose bool
	detach  bool
	argv    []string
}

func parse(args []string) (options, error) {
	o := options{index: -1}
	opts, operands, err := getopt.Spec{Short: "c:n:svo"}.Parse(args)
	if err != nil {
		return o, err
	}
	for _, op := range opts {
		switch op.Name {
		case 'c':
			n, err := strconv.Atoi(op.Value)
			if err != nil || n < 1 {
				return o, fmt.Errorf("-c %s: not a positive number of copies", op.Value)
			}
			o.copies = n
		case 'n':
			n, err := strconv.Atoi(op.Value)
			if err != nil || n < 0 {
				return o, fmt.Errorf("-n %s: not a node index (0 or more)", op.Value)
			}
			o.index = n
		case 's':
			o.seq = true
		case 'v':
			o.verbose = true
		case 'o':
			o.detach = true
		}
	}
	if o.copies > 0 && o.index >= 0 {
		return o, fmt.Errorf("-c and -n exclude each other")
	}
	if len(operands) == 0 {
		return o, fmt.Errorf("no program to run")
	}
	o.argv = operands
	return o, nil
}

// placement is one task: its entry in the node list.
type placement struct {
	Index int
	Node  string
}

// placements picks the node list's entries the tasks run on.
func placements(o options, nodes []string) ([]placement, error) {
	if len(nodes) == 0 {
		return nil, fmt.Errorf("the job's node list is empty")
	}
	switch {
	case o.index >= 0:
		if o.index >= len(nodes) {
			return nil, fmt.Errorf("-n %d: the job has %d node entries (0 to %d)", o.index, len(nodes), len(nodes)-1)
		}
		return []placement{{o.index, nodes[o.index]}}, nil
	case o.copies > 0:
		out := make([]placement, o.copies)
		for i := range out {
			out[i] = placement{i % len(nodes), nodes[i%len(nodes)]}
		}
		return out, nil
	}
	out := make([]placement, len(nodes))
	for i, n := range nodes {
		out[i] = placement{i, n}
	}
	return out, nil
}

// readNodes reads the job's node list.
func readNodes(path string) ([]string, error) {
	if path == "" {
		return nil, fmt.Errorf("PBS_NODEFILE is not set")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var nodes []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if n := strings.TrimSpace(sc.Text()); n != "" {
			nodes = append(nodes, n)
		}
	}
	return nodes, sc.Err()
}

func run(args []string) int {
	// Only before the program: its own -h is the program's.
	if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
		fmt.Println(usage)
		return 0
	}
	o, err := parse(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbsdsh: %v\n%s\n", err, usage)
		return 2
	}
	env := cmdutil.NewEnv("pbsdsh")
	job, err := taskclient.FromEnv(env.Config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbsdsh: %v\n", err)
		return 1
	}
	nodes, err := readNodes(os.Getenv("PBS_NODEFILE"))
	if err == nil {
		var ps []placement
		if ps, err = placements(o, nodes); err == nil {
			return spawn(job, o, ps)
		}
	}
	fmt.Fprintf(os.Stderr, "pbsdsh: %v\n", err)
	return 1
}

// spawn runs the tasks and gives pbsdsh's exit status.
func spawn(job taskclient.Job, o options, ps []placement) int {
	stdout := &taskclient.LockedWriter{W: os.Stdout}
	stderr := &taskclient.LockedWriter{W: os.Stderr}
	status := make([]int, len(ps))
	failed := make([]bool, len(ps))
	one := func(i int) {
		p := ps[i]
		t := taskclient.Task{Node: p.Node, Argv: o.argv, Stdout: stdout, Stderr: stderr, Detach: o.detach,
			Env: map[string]string{"PBS_TASKNUM": strconv.Itoa(i + 1), "PBS_NODENUM": strconv.Itoa(p.Index), "PBS_VNODENUM": strconv.Itoa(p.Index)}}
		if o.verbose {
			fmt.Fprintf(stderr, "pbsdsh: spawning task %d on %s (node %d)\n", i+1, p.Node, p.Index)
		}
		exit, err := taskclient.Run(job, t)
		if err != nil {
			fmt.Fprintf(stderr, "pbsdsh: task %d on %s: %v\n", i+1, p.Node, err)
			failed[i] = true
			return
		}
		status[i] = exit.Status
		if o.verbose && !o.detach {
			fmt.Fprintf(stderr, "pbsdsh: task %d on %s exit status %d\n", i+1, exit.Node, exit.Status)
		}
		if exit.Comment != "" {
			fmt.Fprintf(stderr, "pbsdsh: task %d on %s: %s\n", i+1, exit.Node, exit.Comment)
		}
	}
	if o.seq {
		for i := range ps {
			one(i)
		}
	} else {
		var wg sync.WaitGroup
		for i := range ps {
			wg.Add(1)
			go func() { defer wg.Done(); one(i) }()
		}
		wg.Wait()
	}
	for _, f := range failed {
		if f {
			return 1
		}
	}
	for _, s := range status {
		if s != 0 {
			return s
		}
	}
	return 0
}
