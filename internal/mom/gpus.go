// GPUs: which this node has ($gpus in mom_priv/config, or its static
// ngpus line as a count, else what `nvidia-smi -L` lists, else the
// /dev/nvidiaN device nodes), reported as
// resources_available.ngpus; and each job's, the lowest free indices for
// the ngpus of its chunks here, held from its start to its end (in its
// job file, so a restarted mom holds them again).

package mom

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopbs/gopbs/internal/cgroup"
	"github.com/gopbs/gopbs/proto"
)

// maxGPUs bounds a node's GPUs, so that a mistyped count cannot make a
// huge allocator.
const maxGPUs = 1024

// smiTimeout bounds nvidia-smi, which can hang on a sick driver: the mom
// then starts without what it would have said.
const smiTimeout = 20 * time.Second

// GPUSetting is $gpus: "none", a count N (/dev/nvidia0 to N-1, hidden
// from other jobs where those device nodes exist), or a comma-separated
// list of device paths, the first index 0.
type GPUSetting struct {
	Set   bool
	Count int
	Paths []string
}

func parseGPUSetting(v string) (GPUSetting, error) {
	if v == "none" {
		return GPUSetting{Set: true}, nil
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 || n > maxGPUs {
			return GPUSetting{}, fmt.Errorf("$gpus %d: want 0 to %d", n, maxGPUs)
		}
		return GPUSetting{Set: true, Count: n}, nil
	}
	var paths []string
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if !filepath.IsAbs(p) {
			return GPUSetting{}, fmt.Errorf("$gpus %q: want none, a count or absolute device paths separated by commas", v)
		}
		p = filepath.Clean(p)
		if slices.Contains(paths, p) {
			return GPUSetting{}, fmt.Errorf("$gpus: %s named twice", p)
		}
		paths = append(paths, p)
	}
	if len(paths) > maxGPUs {
		return GPUSetting{}, fmt.Errorf("$gpus: more than %d devices", maxGPUs)
	}
	return GPUSetting{Set: true, Count: len(paths), Paths: paths}, nil
}

// gpuDev is one GPU this mom hands out.
type gpuDev struct {
	Index int    // as jobs see it in CUDA_VISIBLE_DEVICES
	Path  string // its device node ("" when none is known)
	Name  string // from nvidia-smi
	UUID  string // from nvidia-smi
	// Dev is "c major:minor" for the devices cgroup; "" when Path is no
	// character device (a count without device nodes, a test's file).
	Dev string
}

// smiGPU is one GPU line of `nvidia-smi -L`.
type smiGPU struct {
	Index      int
	Name, UUID string
}

// parseNvidiaSmiList reads `nvidia-smi -L`: a line per GPU, "GPU 0:
// Tesla T4 (UUID: GPU-…)". The indented MIG lines under a GPU and
// anything else are skipped; a GPU line that is not understood is an
// error (better no GPUs than the wrong ones).
func parseNvidiaSmiList(s string) ([]smiGPU, error) {
	var out []smiGPU
	for _, line := range strings.Split(s, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "GPU ")
		if !ok {
			continue
		}
		num, desc, ok := strings.Cut(rest, ":")
		idx, err := strconv.Atoi(num)
		if !ok || err != nil || idx < 0 || idx >= maxGPUs || num != strconv.Itoa(idx) {
			return nil, fmt.Errorf("nvidia-smi -L: %q: no GPU index", line)
		}
		if slices.ContainsFunc(out, func(g smiGPU) bool { return g.Index == idx }) {
			return nil, fmt.Errorf("nvidia-smi -L: GPU %d listed twice", idx)
		}
		g := smiGPU{Index: idx, Name: strings.TrimSpace(desc)}
		if name, uuid, ok := strings.Cut(g.Name, "(UUID:"); ok {
			g.Name = strings.TrimSpace(name)
			g.UUID = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(uuid), ")"))
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b smiGPU) int { return a.Index - b.Index })
	return out, nil
}

// charDevice is "c major:minor" of a character device, "" for a regular
// file; anything else (nothing there, a directory) is an error.
func charDevice(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	switch {
	case fi.Mode()&os.ModeCharDevice != 0:
		rdev := uint64(fi.Sys().(*syscall.Stat_t).Rdev)
		return fmt.Sprintf("c %d:%d", unix.Major(rdev), unix.Minor(rdev)), nil
	case fi.Mode().IsRegular():
		return "", nil
	}
	return "", fmt.Errorf("%s is neither a character device nor a file", path)
}

// nvidiaNode names the NVIDIA device nodes of GPUs (nvidia-uvm,
// nvidiactl are shared by all and stay open to every job).
var nvidiaNode = regexp.MustCompile(`^nvidia([0-9]+)$`)

// discoverGPUs finds this node's GPUs: $gpus when set, else nvidia-smi's
// (index, name, UUID; /dev/nvidia<index> their device nodes), else the
// /dev/nvidiaN device nodes in order of N.
func discoverGPUs(s GPUSetting, warn func(msg string, args ...any)) ([]gpuDev, error) {
	var out []gpuDev
	node := func(path string) gpuDev {
		g := gpuDev{Index: len(out)}
		if dev, err := charDevice(path); err == nil {
			g.Path, g.Dev = path, dev
		}
		return g
	}
	switch {
	case len(s.Paths) > 0:
		for i, p := range s.Paths {
			dev, err := charDevice(p)
			if err != nil {
				return nil, fmt.Errorf("$gpus: %w", err)
			}
			out = append(out, gpuDev{Index: i, Path: p, Dev: dev})
		}
		return out, nil
	case s.Set:
		for i := 0; i < s.Count; i++ {
			out = append(out, node("/dev/nvidia"+strconv.Itoa(i)))
		}
		return out, nil
	}
	if smi, err := exec.LookPath("nvidia-smi"); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), smiTimeout)
		text, err := exec.CommandContext(ctx, smi, "-L").Output()
		cancel()
		var list []smiGPU
		if err == nil {
			list, err = parseNvidiaSmiList(string(text))
		}
		if err == nil {
			for _, g := range list {
				d := node("/dev/nvidia" + strconv.Itoa(g.Index))
				d.Index, d.Name, d.UUID = g.Index, g.Name, g.UUID
				out = append(out, d)
			}
			return out, nil
		}
		warn("GPUs: nvidia-smi -L failed; looking for /dev/nvidiaN", "error", err)
	}
	ents, err := os.ReadDir("/dev")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("GPUs: %w", err)
	}
	var nums []int
	for _, e := range ents {
		if m := nvidiaNode.FindStringSubmatch(e.Name()); m != nil {
			n, _ := strconv.Atoi(m[1])
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	for _, n := range nums {
		if g := node("/dev/nvidia" + strconv.Itoa(n)); g.Dev != "" {
			out = append(out, g)
		}
	}
	return out, nil
}

// loadGPUs finds the node's GPUs and makes their allocator. A devices
// cgroup can only hide character devices: confining with it and a GPU
// that is none stops the mom.
func (m *Mom) loadGPUs() error {
	set := m.mc().GPUs
	if v, ok := m.mc().Resources[proto.ResNgpus]; ok && !set.Set {
		// A static ngpus line is the site's count, as "$gpus N": jobs
		// are given indices all the same.
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxGPUs {
			return fmt.Errorf("mom_priv/config: ngpus %q: want 0 to %d", v, maxGPUs)
		}
		set = GPUSetting{Set: true, Count: n}
	}
	gpus, err := discoverGPUs(set, m.log.Warn)
	if err != nil {
		return err
	}
	m.gpus = gpus
	m.setResources(m.mc().Resources)
	if len(gpus) == 0 {
		return nil
	}
	if m.conf != nil && m.conf.cfg.Has(cgroup.Devices) {
		for _, g := range gpus {
			if g.Dev == "" {
				return fmt.Errorf("cgroups: controller devices cannot hide GPU %d: %q is no character device", g.Index, g.Path)
			}
		}
	}
	idx := make(cgroup.CPUSet, len(gpus))
	for i, g := range gpus {
		idx[i] = g.Index
	}
	m.gpuAlloc = cgroup.NewAllocator(idx)
	res := m.live.Load().resources
	if v, ok := res[proto.ResNgpus]; ok && v != strconv.Itoa(len(gpus)) {
		m.log.Warn("mom_priv/config's ngpus is replaced by the GPUs found", "ngpus", v, "found", len(gpus))
	}
	res = maps.Clone(res)
	res[proto.ResNgpus] = strconv.Itoa(len(gpus))
	m.setResources(res)
	m.log.Info("GPUs", "count", len(gpus), "devices", gpus)
	return nil
}

// takeGPUs gives a job the lowest free GPUs for the ngpus of its chunks
// here; a node without as many free refuses the job (the server puts it
// back in its queue).
func (m *Mom) takeGPUs(job *proto.MomJob) ([]int, error) {
	n := jobGPUs(job, m.ownNodes())
	if n <= 0 {
		return nil, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gpuAlloc == nil {
		return nil, proto.Errorf(proto.PBSE_MOMREJECT, ": node %s has no GPUs, the job asks for %d", m.cfg.NodeName, n)
	}
	got, ok := m.gpuAlloc.Take(job.JobID, n)
	if !ok {
		return nil, proto.Errorf(proto.PBSE_MOMREJECT, ": node %s has %d of its %d GPUs free, the job asks for %d",
			m.cfg.NodeName, m.gpuAlloc.Free(), len(m.gpus), n)
	}
	return got, nil
}

// releaseGPUs frees a job's GPUs (mu held).
func (m *Mom) releaseGPUs(id string) {
	if m.gpuAlloc != nil {
		m.gpuAlloc.Release(id)
	}
}

// jobGPUs is the ngpus of a job's chunks on the nodes own (none without
// exec_vnode: a start request of an older server).
func jobGPUs(job *proto.MomJob, own map[string]bool) int {
	var n float64
	for _, a := range allocOf(job) {
		if own[a.Node] {
			n += a.Amounts[proto.ResNgpus]
		}
	}
	return int(n)
}

// deniedGPUs are the devices of this node's GPUs that are not the job's.
func (m *Mom) deniedGPUs(own []int) []string {
	var out []string
	for _, g := range m.gpus {
		if g.Dev != "" && !slices.Contains(own, g.Index) {
			out = append(out, g.Dev)
		}
	}
	return out
}

// execGPUs is how a job's GPUs here are shown (its exec_gpus): Torque's
// form, "node-gpu/0+node-gpu/1".
func execGPUs(node string, gpus []int) string {
	parts := make([]string, len(gpus))
	for i, g := range gpus {
		parts[i] = node + "-gpu/" + strconv.Itoa(g)
	}
	return strings.Join(parts, "+")
}
