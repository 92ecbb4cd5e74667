package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/gopbs/gopbs/"

// ioImports are the packages through which code reaches sockets, files,
// processes or the kernel. A pure package (policy, parsers, formats)
// imports none of them: its callers pass data in.
var ioImports = []string{"net", "net/http", "os", "os/exec", "os/signal", "os/user", "syscall"}

// pure are the packages that must stay pure (DESIGN §3: "policy code
// imports no sockets, files or clocks"; sched/core's purity_test checks
// its clock calls too).
var pure = []string{
	"resc", "sched/core", "sched/schedpriv",
	"internal/place", "sched/fifo", "sched/fairshare", "sched/formula",
	"sched/sim", "internal/model", "internal/qmgrparse", "internal/stage", "internal/mailer",
	"internal/jobjson", "internal/display", "internal/getopt", "internal/msgp", "internal/rrule", "internal/events", "internal/entlim", "internal/vnodedef", "internal/resvspec", "internal/acctsum",
	"internal/server/state", "internal/server/nodes", "internal/server/jobs", "internal/server/resvs", "internal/server/admit", "internal/server/starts", "internal/server/state/statetest",
}

// commands are the user commands: they speak proto to a daemon and never
// link a daemon's insides.
var commands = []string{
	"cmd/qsub", "cmd/qstat", "cmd/qdel", "cmd/qhold", "cmd/qrls", "cmd/qalter", "cmd/qrun", "cmd/qsig", "cmd/qselect", "cmd/qmove",
	"cmd/qrerun", "cmd/qterm", "cmd/qmgr", "cmd/pbsnodes", "cmd/tracejob", "cmd/pbsfs", "cmd/qwait", "cmd/qwatch", "cmd/qorder", "cmd/printjob",
	"internal/cli",
}

// daemonInsides are the packages only their own daemon (and its tests)
// may import.
var daemonInsides = map[string][]string{
	"internal/server":       {"internal/serverd"},
	"internal/server/state": {"internal/server", "internal/server/management", "internal/server/nodes", "internal/server/jobs", "internal/server/resvs", "internal/server/admit", "internal/server/starts"},
	// The server's handler packages take what they need of it as an
	// interface; the server alone puts them together.
	"internal/server/management": {"internal/server"},
	"internal/server/nodes":      {"internal/server"},
	"internal/server/jobs":       {"internal/server"},
	"internal/server/resvs":      {"internal/server"},
	"internal/server/admit":      {"internal/server"},
	"internal/server/starts":     {"internal/server"},
	// The tables the handler packages' tests run over.
	"internal/server/state/statetest": {"internal/server/admit", "internal/server/jobs", "internal/server/nodes", "internal/server/resvs", "internal/server/management", "internal/server/starts"},
	"internal/store":                  {"internal/serverd", "internal/server", "internal/ha", "internal/server/management"},
	"internal/ha":                     {"internal/serverd"},
	"internal/mom":                    {"internal/momd"},
	"internal/shepherd":               {"internal/momd", "cmd/pbs_shepherd", "internal/mom"},
	"internal/stagecopy":              {"internal/mom", "internal/shepherd"},
	"internal/cgroup":                 {"internal/mom", "internal/shepherd"},
	"internal/login":                  {"internal/logind"},
	// The one relay of a host's commands: pbs_mom's and pbs_login's.
	"internal/relay": {"internal/mom", "internal/login"},
}

// rule is one "may not import" line of ARCHITECTURE.md.
type rule struct {
	pkgs   []string // the packages (and their subpackages) it binds
	forbid []string // what they may not import (module paths without "github.com/gopbs/gopbs/", or standard ones)
	why    string
}

var rules = []rule{
	{[]string{"proto"}, []string{"internal/model", "internal/server", "internal/mom", "sched", "resc"}, "the wire depends on nothing above it"},
	{[]string{"resc"}, []string{"proto", "internal/model", "internal/place"}, "resource syntax is the bottom layer"},
	{[]string{"internal/model"}, []string{"internal/server", "internal/store", "internal/mom", "sched"}, "the object model knows no daemon"},
	{[]string{"sched"}, []string{"internal/server", "internal/store", "internal/mom", "internal/shepherd"}, "schedulers talk to the server over proto only"},
	{[]string{"internal/server"}, []string{"internal/mom", "internal/shepherd", "sched"}, "the server never decides what runs and reaches moms over proto"},
	{[]string{"internal/mom", "internal/shepherd"}, []string{"internal/server", "internal/store", "sched"}, "a node agent knows the server only over proto"},
	{[]string{"internal/shepherd"}, []string{"internal/mom"}, "the shepherd outlives its mom: it links none of it"},
	{[]string{"internal/login", "internal/logind", "internal/relay"}, []string{"internal/server", "internal/store", "internal/mom", "internal/shepherd", "sched"}, "a login host's agent relays over proto and links no daemon"},
}

// imports lists every package of the module (by path without "github.com/gopbs/gopbs/")
// with what its non-test files import.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "pbs_home") {
				return filepath.SkipDir
			}
			// A folder with a go.mod of its own (examples/) is another
			// module: it reaches this one only through its public packages,
			// which the compiler enforces.
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			p = strings.TrimPrefix(p, module)
			if !slices.Contains(out[rel], p) {
				out[rel] = append(out[rel], p)
			}
		}
		if _, ok := out[rel]; !ok {
			out[rel] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// under reports whether pkg is p or below it.
func under(pkg, p string) bool { return pkg == p || strings.HasPrefix(pkg, p+"/") }

func TestImportRules(t *testing.T) {
	all := imports(t)
	if len(all) < 40 {
		t.Fatalf("found %d packages: the walk missed the module", len(all))
	}
	for pkg, imps := range all {
		for _, p := range pure {
			if pkg != p {
				continue
			}
			for _, imp := range imps {
				if slices.Contains(ioImports, imp) {
					t.Errorf("%s imports %s: it is one of the pure packages (ARCHITECTURE.md), which take data, not files or sockets", pkg, imp)
				}
			}
		}
		for _, r := range rules {
			bound := false
			for _, p := range r.pkgs {
				bound = bound || under(pkg, p)
			}
			if !bound {
				continue
			}
			for _, imp := range imps {
				for _, f := range r.forbid {
					if under(imp, f) && !under(imp, pkg) {
						t.Errorf("%s imports %s: %s (ARCHITECTURE.md)", pkg, imp, r.why)
					}
				}
			}
		}
		for inside, allowed := range daemonInsides {
			for _, imp := range imps {
				if imp == inside && !under(pkg, inside) && !slices.Contains(allowed, pkg) {
					t.Errorf("%s imports %s, which only %v may (ARCHITECTURE.md)", pkg, inside, allowed)
				}
			}
		}
		if slices.ContainsFunc(commands, func(c string) bool { return under(pkg, c) }) {
			for _, imp := range imps {
				if _, daemon := daemonInsides[imp]; daemon {
					t.Errorf("command %s imports %s: commands speak proto to the daemons", pkg, imp)
				}
			}
		}
		for _, imp := range imps {
			if imp == "internal/testcluster" && pkg != "tools/pbsbench" {
				t.Errorf("%s imports internal/testcluster outside a test", pkg)
			}
		}
	}
}

// The rules bind packages that exist: a rename must carry them along.
func TestImportRulesNameRealPackages(t *testing.T) {
	all := imports(t)
	var named []string
	named = append(named, pure...)
	named = append(named, commands...)
	for p := range daemonInsides {
		named = append(named, p)
	}
	for _, r := range rules {
		named = append(named, r.pkgs...)
	}
	for _, p := range named {
		found := false
		for pkg := range all {
			found = found || under(pkg, p)
		}
		if !found {
			t.Errorf("the rules name %s, which is not a package (or folder of packages) of the module", p)
		}
	}
}
