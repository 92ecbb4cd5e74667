package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stateFields are the fields of model.Job that only its transitions
// (internal/model/transition.go, EvalState) write: every change of a job's
// state goes through one of them, so the rules that go with a state
// (etime, substate, start and end times, what the server must do next)
// are written once.
var stateFields = map[string]bool{"State": true, "Substate": true, "Suspended": true}

// jobOwners are the packages that hold model.Jobs and change them.
var jobOwners = []string{"internal/server", "internal/store"}

func TestJobStateOnlyThroughTransitions(t *testing.T) {
	fset := token.NewFileSet()
	for _, dir := range jobOwners {
		files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no files (%v)", dir, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(fset, path, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				as, ok := n.(*ast.AssignStmt)
				if !ok {
					return true
				}
				for _, lhs := range as.Lhs {
					if sel, ok := lhs.(*ast.SelectorExpr); ok && stateFields[sel.Sel.Name] {
						t.Errorf("%s: writes .%s directly; a job's state changes only through its transitions (internal/model/transition.go)", fset.Position(as.Pos()), sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}
