package mom

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/atomicfile"
	"github.com/gopbs/gopbs/internal/vnodedef"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// The version-2 configuration files of PBS_HOME/mom_priv/config.d: the
// vnodes this host is split into (internal/vnodedef reads them). pbs_mom -s
// manages them as OpenPBS's does; the running mom reads them at start and
// at SIGHUP, with mom_priv/config.

// ConfigDir is where a mom's version-2 files are.
func ConfigDir(home string) string { return filepath.Join(home, "mom_priv", "config.d") }

// ListConfigs names the files in the order the mom applies them: those
// whose names start with "PBS" (PBS's own), then the site's, each in
// byte order. No directory is no files.
func ListConfigs(home string) ([]string, error) {
	ents, err := os.ReadDir(ConfigDir(home))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.SliceStable(names, func(i, j int) bool {
		pi, pj := strings.HasPrefix(names[i], "PBS"), strings.HasPrefix(names[j], "PBS")
		if pi != pj {
			return pi
		}
		return names[i] < names[j]
	})
	return names, nil
}

// InsertConfig adds a site's file named name with data (pbs_mom -s insert).
// The name must be free and not PBS's; data must parse, so that a file the
// mom would refuse at its next start never lands.
func InsertConfig(home, name string, data []byte) error {
	if err := vnodedef.CheckFileName(name); err != nil {
		return err
	}
	if _, err := vnodedef.Parse(name, data); err != nil {
		return err
	}
	dir := ConfigDir(home)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	err := atomicfile.WriteWith(filepath.Join(dir, name), data, 0o644, atomicfile.Options{NoReplace: true})
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("configuration file %q already exists (pbs_mom -s remove it first)", name)
	}
	return err
}

// RemoveConfig deletes a site's file (pbs_mom -s remove).
func RemoveConfig(home, name string) error {
	if err := vnodedef.CheckFileName(name); err != nil {
		return err
	}
	err := os.Remove(filepath.Join(ConfigDir(home), name))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("configuration file %q does not exist (pbs_mom -s list shows them)", name)
	}
	if err == nil {
		err = atomicfile.SyncDir(ConfigDir(home))
	}
	return err
}

// ShowConfig returns one file's contents (pbs_mom -s show); PBS's own
// files may be shown too.
func ShowConfig(home, name string) ([]byte, error) {
	if err := vnodedef.CheckPlainName(name); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(ConfigDir(home), name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("configuration file %q does not exist (pbs_mom -s list shows them)", name)
	}
	return data, err
}

// readVnodes reads every file of config.d, in order, into the vnodes they
// define; a file that does not parse is refused, naming it and its line.
func readVnodes(home string) ([]*vnodedef.Vnode, error) {
	names, err := ListConfigs(home)
	if err != nil {
		return nil, err
	}
	var files [][]vnodedef.Line
	for _, name := range names {
		path := filepath.Join(ConfigDir(home), name)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		lines, err := vnodedef.Parse(path, data)
		if err != nil {
			return nil, err
		}
		files = append(files, lines)
	}
	return vnodedef.Merge(files...), nil
}

// applyVnodes puts the vnode definitions into a report: the definition of
// the mom's own node overrides what the host shows (an admin gives the
// natural node ncpus 0 when the vnodes hold the cpus), every other one is
// a vnode of its own, with no cpus or memory unless its definition gives
// them, as in OpenPBS.
func applyVnodes(st *proto.MomStatus, defs []*vnodedef.Vnode) {
	for _, v := range defs {
		if v.Name == st.Node {
			ncpus, mem, rest := splitResources(v.Resources, st.Ncpus, st.Physmem)
			st.Ncpus, st.Physmem = ncpus, mem
			if len(rest) > 0 {
				merged := maps.Clone(st.Resources)
				if merged == nil {
					merged = map[string]string{}
				}
				maps.Copy(merged, rest)
				st.Resources = merged
			}
			st.NodeAttrs = vnodeAttrs(v)
			continue
		}
		ncpus, mem, rest := splitResources(v.Resources, 0, 0)
		st.Vnodes = append(st.Vnodes, proto.VnodeStatus{Name: v.Name, Ncpus: ncpus, Physmem: mem, Resources: rest, Attrs: vnodeAttrs(v)})
	}
}

// splitResources takes ncpus and mem out of a definition's resources
// (checked by vnodedef.Parse), defaulting to the values given.
func splitResources(res map[string]string, ncpus int, mem int64) (int, int64, map[string]string) {
	rest := map[string]string{}
	for k, v := range res {
		switch k {
		case proto.ResNcpus:
			ncpus, _ = strconv.Atoi(v)
		case proto.ResMem:
			mem, _ = resc.ParseSize(v)
		default:
			rest[k] = v
		}
	}
	return ncpus, mem, rest
}

// vnodeAttrs are a definition's attributes other than resources.
func vnodeAttrs(v *vnodedef.Vnode) map[string]string {
	out := map[string]string{}
	if v.Sharing != "" {
		out[proto.AttrNodeSharing] = v.Sharing
	}
	if v.ResvEnable != nil {
		out[proto.AttrNodeResvEnable] = resc.FormatBool(*v.ResvEnable)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ownNodes are the nodes this mom runs jobs' parts for: its own and the
// vnodes its definitions name. A job's share here (cpus, memory, GPUs) is
// what its exec_vnode gives all of them.
func (m *Mom) ownNodes() map[string]bool {
	own := map[string]bool{m.cfg.NodeName: true}
	for _, v := range m.mc().Vnodes {
		own[v.Name] = true
	}
	return own
}
