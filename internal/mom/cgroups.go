// Confinement: mom_priv/cgroups, read at start; each job's cgroup, made
// before its shepherd starts with the job's share of this node (its mem,
// its own cpus or a cpu quota); the cpus the jobs' cpusets hold; and the
// removal of cgroups that no job here owns. Without the file the mom
// confines nothing. Suspend and resume freeze and thaw a job's cgroup
// where the host can (signal.go). The shepherd starts the job inside
// the cgroup and kills, reads and removes it at the job's end
// (internal/cgroup).

package mom

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/cgroup"
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/proto"
)

// confinement is a mom's cgroup setup; its allocator is guarded by
// Mom.mu.
type confinement struct {
	cfg     cgroup.Config
	tree    *cgroup.Tree
	alloc   *cgroup.Allocator // nil without the cpuset controller
	physmem int64             // the host's memory, for the default limit
}

// cgroupKillWait bounds how long the mom waits for a leftover cgroup's
// processes to die before it gives up on removing it (and says so).
const cgroupKillWait = 5 * time.Second

// loadConfinement reads mom_priv/cgroups and opens the hierarchy it asks
// for: nil without the file, when it says "enabled false", or when this
// host is excluded. A bad line, or a host that cannot confine as asked,
// is an error that stops the mom.
func loadConfinement(home, node string, hostNames []string, log hclog.Logger) (*confinement, error) {
	path := filepath.Join(home, "mom_priv", cgroup.ConfigFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cfg, err := cgroup.ParseConfig(f, path)
	f.Close()
	if err != nil {
		return nil, err
	}
	if !cfg.Enabled {
		log.Info("cgroups: disabled in mom_priv/cgroups; jobs are not confined")
		return nil, nil
	}
	if cfg.Excluded(append([]string{node}, hostNames...)...) {
		log.Info("cgroups: this host is in exclude_hosts; jobs are not confined", "node", node)
		return nil, nil
	}
	sys, err := cgroup.HostSystem()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tree, err := cgroup.Open(cfg, sys)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	facts, err := readHostFacts()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c := &confinement{cfg: cfg, tree: tree, physmem: facts.Physmem}
	if cfg.Has(cgroup.Cpuset) {
		c.alloc = cgroup.NewAllocator(tree.CPUs())
	}
	var roots []string
	for _, r := range tree.Roots() {
		roots = append(roots, r.Path)
	}
	log.Info("cgroups: jobs are confined", "v2", tree.V2(), "controllers", cfg.Controllers, "roots", roots, "cpus", tree.CPUs().String(), "suspend_freezes", tree.Freezes())
	return c, nil
}

// reportedMem is the memory this mom offers jobs: the host's, less what
// mom_priv/cgroups keeps for the host.
func (m *Mom) reportedMem(physmem int64) int64 {
	if m.conf == nil || m.conf.cfg.MemReserved <= 0 {
		return physmem
	}
	return max(0, physmem-m.conf.cfg.MemReserved)
}

// jobShare is what a job takes of this host: the sums of its chunks on
// the nodes own (the mom's and its vnodes) in its exec_vnode.
func jobShare(job *proto.MomJob, own map[string]bool) (mem, vmem, ncpus float64) {
	alloc := allocOf(job)
	if alloc == nil {
		// A start request without exec_vnode: the first chunk's cpus.
		return 0, 0, float64(job.Ncpus)
	}
	for _, a := range alloc {
		if !own[a.Node] {
			continue
		}
		mem += a.Amounts[proto.ResMem]
		vmem += a.Amounts[proto.ResVmem]
		ncpus += a.Amounts[proto.ResNcpus]
	}
	return mem, vmem, ncpus
}

// allocOf is a job's allocation chunk by chunk: as the server sent it
// typed (MomJob.Alloc), or read from ExecVnode when a server before Alloc
// sent only that; nil for neither.
func allocOf(job *proto.MomJob) []proto.MomChunk {
	if job.Alloc != nil || job.ExecVnode == "" {
		return job.Alloc
	}
	parts := place.ParseAssigned(nil, job.ExecVnode)
	out := make([]proto.MomChunk, len(parts))
	for i, a := range parts {
		out[i] = proto.MomChunk{Node: a.Node, Amounts: a.Amounts}
	}
	return out
}

// makeCgroup makes a job's cgroup: its mem here (the host's memory less
// the reserve when it asks for none), its own cpus where enough are
// free, else a quota of its ncpus (the node's cpus are shared, or more
// are promised than the host has), the pids limit, and the node's GPUs
// other than its own (gpus) out of its reach.
func (m *Mom) makeCgroup(job *proto.MomJob, gpus []int) (*cgroup.Job, error) {
	c := m.conf
	mem, vmem, ncpus := jobShare(job, m.ownNodes())
	lim := cgroup.Limits{Mem: int64(mem), Vmem: int64(vmem), PidsMax: c.cfg.PidsMax}
	if c.cfg.Has(cgroup.Devices) {
		lim.DenyDevices = m.deniedGPUs(gpus)
	}
	if lim.Mem == 0 && c.cfg.MemReserved > 0 {
		lim.Mem = m.reportedMem(c.physmem)
	}
	if c.alloc != nil && ncpus > 0 {
		m.mu.Lock()
		lim.Cpus, _ = c.alloc.Take(job.JobID, int(math.Ceil(ncpus)))
		m.mu.Unlock()
	}
	if len(lim.Cpus) == 0 && c.cfg.Has(cgroup.CPU) && ncpus > 0 {
		lim.CPUQuota = ncpus
	}
	cg, err := c.tree.Create(job.JobID, lim)
	if err != nil {
		m.releaseCpus(job.JobID)
		return nil, err
	}
	return cg, nil
}

// releaseCpus frees the cpus of a job that never started.
func (m *Mom) releaseCpus(id string) {
	if m.conf == nil || m.conf.alloc == nil {
		return
	}
	m.mu.Lock()
	m.conf.alloc.Release(id)
	m.mu.Unlock()
}

// dropCgroup kills what is left in a job's cgroup and removes it; res,
// the job's result, if any, says whether it is left.
func (m *Mom) dropCgroup(id string, cg *cgroup.Job, res *shepherd.Result) {
	if cg == nil {
		return
	}
	err := cg.Destroy(cgroupKillWait)
	if err != nil {
		m.log.Error("cannot remove a job's cgroup", "job", id, "error", err)
	}
	if res != nil {
		res.CgroupLeft = err != nil
	}
}

// recoverCgroups, at start, gives the running jobs found their cpus back
// and removes every other cgroup of the tree: jobs that ended or were
// given up while no mom ran, starts that never completed.
func (m *Mom) recoverCgroups() error {
	if m.conf == nil {
		return nil
	}
	for _, j := range m.jobs {
		if j.cg != nil && j.result == nil && m.conf.alloc != nil {
			m.conf.alloc.Hold(j.spec.JobID, j.cg.Limits.Cpus)
		}
	}
	ids, err := m.conf.tree.List()
	if err != nil {
		return fmt.Errorf("cgroups: %w", err)
	}
	for _, id := range ids {
		if j := m.jobs[id]; j != nil && j.result == nil {
			continue
		}
		if j := m.jobs[id]; j == nil && exists(filepath.Join(m.jobsDir, id)) {
			// Its directory was left aside unread: its processes are not
			// this mom's to kill.
			m.log.Warn("cgroup of a job whose directory is unreadable left alone", "job", id)
			continue
		}
		cg, err := m.conf.tree.Job(id)
		if err != nil {
			m.log.Warn("foreign directory in the jobs' cgroups left alone", "name", id, "error", err)
			continue
		}
		if err := cg.Destroy(cgroupKillWait); err != nil {
			m.log.Error("cannot remove the cgroup of a job no longer here", "job", id, "error", err)
			continue
		}
		m.log.Info("removed the cgroup of a job no longer here", "job", id)
	}
	return nil
}

// cgroupUsage is a job's usage as its cgroup counted it (peaks); v1
// counts no cpu, which is then that of the processes in it now (each
// with what it reaped).
func cgroupUsage(cg *cgroup.Job) proto.Usage {
	u := cg.Usage()
	used := proto.Usage{CPUSecs: u.CPUNanos / int64(time.Second), MemBytes: u.MemPeak, VmemBytes: u.VmemPeak}
	if !cg.V2 {
		var ticks int64
		for _, p := range shepherd.ProcStats(cg.Procs()) {
			ticks += p.CPUTicks
		}
		used.CPUSecs = ticks / shepherd.ClockTicks
	}
	return used
}
