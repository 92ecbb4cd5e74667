package mom

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"

	"github.com/gopbs/gopbs/proto"
)

// SIGHUP: an admin who edited mom_priv/config asks the mom to read it
// again, as OpenPBS's and Torque's moms do. A file that would stop the mom
// at start is refused and the settings in force are kept; settings that
// only a start can apply are kept too, with a warning naming them.

// liveConfig is what mom_priv/config gives the running mom.
type liveConfig struct {
	conf *MomConfig
	// resources are the static resources reported: conf's, with ngpus
	// the count of GPUs found when there are any.
	resources map[string]string
}

// mc is mom_priv/config as in force now. Who calls: any goroutine; the
// value is never changed, only replaced (Reload).
func (m *Mom) mc() *MomConfig { return m.live.Load().conf }

// setResources replaces the static resources reported (start only, while
// nothing else runs).
func (m *Mom) setResources(res map[string]string) {
	cur := m.live.Load()
	m.live.Store(&liveConfig{conf: cur.conf, resources: res})
}

// readMomConfig reads and checks mom_priv/config (no file is the
// defaults) and the vnode definitions of mom_priv/config.d.
func (m *Mom) readMomConfig() (*MomConfig, error) {
	c, err := m.readConfigFile()
	if err != nil {
		return nil, err
	}
	if c.Vnodes, err = readVnodes(m.cfg.Home); err != nil {
		return nil, err
	}
	return c, nil
}

// readConfigFile reads and checks mom_priv/config itself.
func (m *Mom) readConfigFile() (*MomConfig, error) {
	path := filepath.Join(m.cfg.Home, "mom_priv", "config")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return DefaultMomConfig(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c, err := ParseMomConfig(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, w := range c.Warnings {
		m.log.Warn("mom_priv/config", "note", w)
	}
	if err := checkMomConfig(c, m.cfg.ServerAddr); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Reload reads mom_priv/config again (SIGHUP). A file that does not parse
// or check is refused, naming the file and line, and the settings in
// force stay; $tmpdir, $gpus, the ngpus line and the node health check
// take effect only at the next start (the warning says which changed).
// The server is sent a report at once. It returns what changed, or the
// refusal.
func (m *Mom) Reload() ([]string, error) {
	c, err := m.readMomConfig()
	if err != nil {
		m.log.Error("mom_priv/config not reloaded: the settings in force are kept (config.d included)", "error", err)
		return nil, err
	}
	cur := m.live.Load()
	old := cur.conf
	var later []string
	if c.TmpDir != old.TmpDir {
		later = append(later, "$tmpdir")
		c.TmpDir = old.TmpDir
	}
	if !reflect.DeepEqual(c.GPUs, old.GPUs) {
		later = append(later, "$gpus")
		c.GPUs = old.GPUs
	}
	if !reflect.DeepEqual(c.NodeCheck, old.NodeCheck) {
		later = append(later, "$node_check_script/$node_check_interval")
		c.NodeCheck = old.NodeCheck
	}
	res := maps.Clone(c.Resources)
	if res == nil {
		res = map[string]string{}
	}
	if v, ok := old.Resources[proto.ResNgpus]; ok != hasKey(c.Resources, proto.ResNgpus) || v != c.Resources[proto.ResNgpus] {
		later = append(later, "ngpus")
	}
	delete(res, proto.ResNgpus)
	if v, ok := cur.resources[proto.ResNgpus]; ok {
		res[proto.ResNgpus] = v
	}
	var changed []string
	for _, f := range []struct {
		name     string
		old, new any
	}{
		{"$ideal_load", old.IdealLoad, c.IdealLoad}, {"$max_load", old.MaxLoad, c.MaxLoad},
		{"resources", cur.resources, res}, {"$rcpcmd", old.Rcp, c.Rcp}, {"$stage_timeout", old.StageTimeout, c.StageTimeout},
		{"$usecp", old.UseCp, c.UseCp}, {"$cputmult", old.CputMult, c.CputMult}, {"$wallmult", old.WallMult, c.WallMult},
		{"$prologalarm", old.PrologAlarm, c.PrologAlarm}, {"$action checkpoint_abort", old.Checkpoint, c.Checkpoint},
		{"vnodes", old.Vnodes, c.Vnodes},
	} {
		if !reflect.DeepEqual(f.old, f.new) {
			changed = append(changed, f.name)
		}
	}
	m.live.Store(&liveConfig{conf: c, resources: res})
	if len(later) > 0 {
		m.log.Warn("mom_priv/config reloaded: these settings take effect when pbs_mom restarts", "kept", later)
	}
	m.log.Info("mom_priv/config reloaded", "changed", changed)
	m.wakeLink()
	return changed, nil
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }
