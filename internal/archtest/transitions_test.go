package archtest

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// stateFields are the fields of model.Job that only its transitions
// (internal/model/transition.go, EvalState) write: every change of a job's
// state goes through one of them, so the rules that go with a state
// (etime, substate, start and end times, what the server must do next)
// are written once.
var stateFields = map[string]bool{"State": true, "Substate": true, "Suspended": true}

// stateWriters are the places of internal/model that write those fields
// themselves: a file, or a file's function.
var stateWriters = map[string]string{
	"internal/model/transition.go":        "the transitions",
	"internal/model/jobcodec.go":          "the stored form, decoded into a job being loaded",
	"internal/model/job.go:EvalState":     "a queued job's state worked out from its holds and times",
	"internal/model/array.go:Subjob":      "a subjob made from its parent, in transit as a new job is",
	"internal/model/array.go:EndedSubjob": "a finished subjob shown from its record",
}

// jobReachers are the packages that can reach a model.Job: internal/model
// and every package that imports it.
func jobReachers(t *testing.T) []string {
	t.Helper()
	out := []string{"internal/model"}
	for pkg, imps := range imports(t) {
		if slices.Contains(imps, "internal/model") {
			out = append(out, pkg)
		}
	}
	sort.Strings(out)
	for _, must := range []string{"internal/server", "internal/store"} {
		if !slices.Contains(out, must) {
			t.Fatalf("%s does not import internal/model: the walk missed it (%v)", must, out)
		}
	}
	return out
}

// A job's state is written only by its transitions, in every package that
// can reach a job: no assignment (plain, tuple or op=), ++/--, address
// taken (a pointer would let anything write it later) or keyed composite
// literal of a Job setting it.
func TestJobStateOnlyThroughTransitions(t *testing.T) {
	fset, checked := jobReachersChecked(t)
	for _, c := range checked {
		dir, info := c.dir, c.info
		job := jobType(t, c.pkg)
		for _, f := range c.files {
			rel := dir + "/" + filepath.Base(fset.Position(f.Pos()).Filename)
			if _, ok := stateWriters[rel]; ok {
				continue
			}
			for _, decl := range f.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok {
					if _, ok := stateWriters[rel+":"+fn.Name.Name]; ok {
						continue
					}
				}
				for _, w := range stateWrites(decl, isJobField(info, job), isJobLit(info, job)) {
					t.Errorf("%s: %s .%s directly; a job's state changes only through its transitions (internal/model/transition.go)", fset.Position(w.pos), w.how, w.field)
				}
			}
		}
	}
}

// checkedPackage is one package type-checked: its non-test files, what
// the checker recorded of them, and the package.
type checkedPackage struct {
	dir   string
	files []*ast.File
	info  *types.Info
	pkg   *types.Package
}

// reachersChecked holds the packages that can reach a job, type-checked
// once per test binary for the guards that read them.
var reachersChecked struct {
	once sync.Once
	fset *token.FileSet
	pkgs []checkedPackage
	err  error
}

// jobReachersChecked is every package that can reach a job (jobReachers),
// type-checked, made on the first call.
func jobReachersChecked(t *testing.T) (*token.FileSet, []checkedPackage) {
	t.Helper()
	dirs := jobReachers(t)
	r := &reachersChecked
	r.once.Do(func() {
		r.fset = token.NewFileSet()
		imp, err := exportImporter(r.fset)
		if err != nil {
			r.err = err
			return
		}
		for _, dir := range dirs {
			c, err := checkPackage(r.fset, imp, dir)
			if err != nil {
				r.err = err
				return
			}
			r.pkgs = append(r.pkgs, c)
		}
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.fset, r.pkgs
}

// exportImporter imports the module's packages and their dependencies
// from the compiler's export data, which go list -export builds (cached).
func exportImporter(fset *token.FileSet) (types.Importer, error) {
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %w", err)
	}
	export := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			export[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := export[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	}), nil
}

// checkPackage parses and type-checks the non-test files of dir.
func checkPackage(fset *token.FileSet, imp types.Importer, dir string) (checkedPackage, error) {
	files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
	if err != nil || len(files) == 0 {
		return checkedPackage{}, fmt.Errorf("%s: no files (%v)", dir, err)
	}
	c := checkedPackage{dir: dir}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return checkedPackage{}, err
		}
		c.files = append(c.files, f)
	}
	c.info = &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}}
	conf := types.Config{Importer: imp}
	if c.pkg, err = conf.Check(module+dir, fset, c.files, c.info); err != nil {
		return checkedPackage{}, fmt.Errorf("type-checking %s: %w", dir, err)
	}
	return c, nil
}

// modelOf is internal/model as pkg sees it (pkg itself when it is
// internal/model).
func modelOf(pkg *types.Package) *types.Package {
	for _, p := range pkg.Imports() {
		if p.Path() == module+"internal/model" {
			return p
		}
	}
	return pkg
}

// jobType is model.Job as pkg sees it.
func jobType(t *testing.T, pkg *types.Package) *types.Named {
	t.Helper()
	obj, ok := modelOf(pkg).Scope().Lookup("Job").(*types.TypeName)
	if !ok {
		t.Fatalf("%s: no model.Job", pkg.Path())
	}
	return obj.Type().(*types.Named)
}

// isJobField says whether a selector selects a field of job.
func isJobField(info *types.Info, job *types.Named) func(*ast.SelectorExpr) bool {
	return func(sel *ast.SelectorExpr) bool {
		s, ok := info.Selections[sel]
		if !ok || s.Kind() != types.FieldVal {
			return false
		}
		recv := s.Recv()
		if p, ok := recv.(*types.Pointer); ok {
			recv = p.Elem()
		}
		return types.Identical(recv, job)
	}
}

// isJobLit says whether a composite literal is a model.Job.
func isJobLit(info *types.Info, job *types.Named) func(*ast.CompositeLit) bool {
	return func(lit *ast.CompositeLit) bool {
		tv, ok := info.Types[lit]
		return ok && types.Identical(tv.Type, job)
	}
}

type stateWrite struct {
	pos        token.Pos
	how, field string
}

// stateWrites finds the writes of stateFields in n: of the selectors
// field accepts and in the composite literals lit accepts.
func stateWrites(n ast.Node, field func(*ast.SelectorExpr) bool, lit func(*ast.CompositeLit) bool) []stateWrite {
	var out []stateWrite
	state := func(e ast.Expr) (string, bool) {
		sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
		if ok && stateFields[sel.Sel.Name] && field(sel) {
			return sel.Sel.Name, true
		}
		return "", false
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, lhs := range n.Lhs {
				if name, ok := state(lhs); ok {
					out = append(out, stateWrite{n.Pos(), "assigns", name})
				}
			}
		case *ast.IncDecStmt:
			if name, ok := state(n.X); ok {
				out = append(out, stateWrite{n.Pos(), "steps", name})
			}
		case *ast.UnaryExpr:
			if name, ok := state(n.X); ok && n.Op == token.AND {
				out = append(out, stateWrite{n.Pos(), "takes the address of", name})
			}
		case *ast.CompositeLit:
			if !lit(n) {
				return true
			}
			for _, el := range n.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if id, ok := kv.Key.(*ast.Ident); ok && stateFields[id.Name] {
						out = append(out, stateWrite{kv.Pos(), "sets in a Job literal", id.Name})
					}
				}
			}
		}
		return true
	})
	return out
}

// The guard finds each kind of write it names, and nothing in a read.
func TestStateWritesFound(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"j.State = x", []string{"assigns State"}},
		{"a, j.Substate = 1, 2", []string{"assigns Substate"}},
		{"j.Substate += 1", []string{"assigns Substate"}},
		{"(j.Substate)++", []string{"steps Substate"}},
		{"p := &j.Suspended; _ = p", []string{"takes the address of Suspended"}},
		{"_ = model.Job{ID: \"1\", State: s}", []string{"sets in a Job literal State"}},
		{"_ = Node{State: s}", nil},
		{"x := j.State; _ = x == j.Substate", nil},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package p\nfunc f() {\n"+tc.src+"\n}\n", 0)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		var got []string
		// Without types: every selector is a job's, and a literal is a
		// Job's when its type is named Job.
		anyField := func(*ast.SelectorExpr) bool { return true }
		jobNamed := func(lit *ast.CompositeLit) bool {
			sel, ok := lit.Type.(*ast.SelectorExpr)
			return ok && sel.Sel.Name == "Job"
		}
		for _, w := range stateWrites(f, anyField, jobNamed) {
			got = append(got, w.how+" "+w.field)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: found %v, want %v", tc.src, got, tc.want)
		}
	}
}

// hooksMakers are the functions that make a job's copy for their caller
// to store, with the caller telling the scheduler of it as of any new or
// moved job: the transition's hooks stay theirs.
var hooksMakers = map[string]string{
	"internal/model/array.go:Subjob":               "a subjob made from its parent; the server tells the scheduler of new subjobs",
	"internal/server/admit/enqueue.go:Enqueue":     "the copy a submission, qmove, qorder or the router stores; they tell the scheduler",
	"internal/server/admit/enqueue.go:routeOrHold": "the copy a submission stores in a route queue",
}

// What a transition returns (model.Hooks: dependants to release, the
// scheduler to tell) is never dropped: in every package that can reach a
// job, a call whose result is a model.Hooks is neither a statement of its
// own nor assigned to _.
func TestTransitionHooksNeverDropped(t *testing.T) {
	fset, checked := jobReachersChecked(t)
	for _, c := range checked {
		dir, info, parsed := c.dir, c.info, c.files
		hooks, ok := modelOf(c.pkg).Scope().Lookup("Hooks").(*types.TypeName)
		if !ok {
			t.Fatalf("%s: no model.Hooks", dir)
		}
		isHooks := func(e ast.Expr) bool {
			tv, ok := info.Types[e]
			return ok && types.Identical(tv.Type, hooks.Type())
		}
		for _, f := range parsed {
			rel := dir + "/" + filepath.Base(fset.Position(f.Pos()).Filename)
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncDecl:
					if _, ok := hooksMakers[rel+":"+n.Name.Name]; ok {
						return false
					}
				case *ast.ExprStmt:
					if isHooks(n.X) {
						t.Errorf("%s: the model.Hooks of a transition are dropped; pass them to the server's hooks", fset.Position(n.Pos()))
					}
				case *ast.AssignStmt:
					for i, lhs := range n.Lhs {
						if id, ok := lhs.(*ast.Ident); ok && id.Name == "_" && len(n.Rhs) == len(n.Lhs) && isHooks(n.Rhs[i]) {
							t.Errorf("%s: the model.Hooks of a transition are assigned to _; pass them to the server's hooks", fset.Position(n.Pos()))
						}
					}
				}
				return true
			})
		}
	}
}
