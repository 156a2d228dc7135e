package codeshape

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// root is the module's root, from this package's directory.
const root = "../.."

// srcFile is one parsed non-test Go file of the module.
type srcFile struct {
	rel  string // path from the module root
	dir  string // its package's directory (from the module root)
	fset *token.FileSet
	f    *ast.File
}

// sources parses every non-test Go file of the module (testdata and hidden
// directories aside).
func sources(t *testing.T) []srcFile {
	t.Helper()
	fset := token.NewFileSet()
	var out []srcFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, srcFile{rel: filepath.ToSlash(rel), dir: filepath.ToSlash(filepath.Dir(rel)), fset: fset, f: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("found %d source files under %s: not the module", len(out), root)
	}
	return out
}

// funcName is a function's name as "dir.Recv.Name" or "dir.Name".
func funcName(sf srcFile, fd *ast.FuncDecl) string {
	name := fd.Name.Name
	if fd.Recv != nil && len(fd.Recv.List) > 0 {
		name = recvType(fd.Recv.List[0].Type) + "." + name
	}
	return sf.dir + "." + name
}

// recvType is the name of a receiver's type (without *, type parameters).
func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvType(t.X)
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// maxLines is the longest a function outside tests may be.
const maxLines = 100

// longAllowed are the functions still over maxLines, with the owner of their
// split: the list can only shrink (a function that fits is taken off it).
var longAllowed = []string{}

// TestNoLongFunctions: no function outside tests is over maxLines lines but
// the ones longAllowed names, and each of those still is (else it leaves the
// list).
func TestNoLongFunctions(t *testing.T) {
	long := map[string]int{}
	for _, sf := range sources(t) {
		for _, d := range sf.f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := sf.fset.Position(fd.End()).Line - sf.fset.Position(fd.Pos()).Line + 1
			if n > maxLines {
				long[funcName(sf, fd)] = n
			}
		}
	}
	for name, n := range long {
		if !slices.Contains(longAllowed, name) {
			t.Errorf("%s is %d lines (at most %d): split it by its stages", name, n, maxLines)
		}
	}
	for _, name := range longAllowed {
		if _, ok := long[name]; !ok {
			t.Errorf("%s is no longer over %d lines (or gone): take it off longAllowed", name, maxLines)
		}
	}
}

// unexportedAllowed are the exported functions still returning an unexported
// type (none left: the list can only shrink).
var unexportedAllowed = []string{}

// TestExportedReturnsExported: an exported function (or an exported method of
// an exported type) returns exported types or interfaces, so its callers can
// name what they hold and godoc shows its fields.
func TestExportedReturnsExported(t *testing.T) {
	srcs := sources(t)
	unexported := map[string]map[string]bool{} // dir → its unexported type names
	for _, sf := range srcs {
		for _, d := range sf.f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, sp := range gd.Specs {
				if ts := sp.(*ast.TypeSpec); !ts.Name.IsExported() {
					if unexported[sf.dir] == nil {
						unexported[sf.dir] = map[string]bool{}
					}
					unexported[sf.dir][ts.Name.Name] = true
				}
			}
		}
	}
	for _, sf := range srcs {
		if sf.f.Name.Name == "main" {
			continue
		}
		for _, d := range sf.f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() || fd.Type.Results == nil {
				continue
			}
			if fd.Recv != nil && !ast.IsExported(recvType(fd.Recv.List[0].Type)) {
				continue // not reachable by name from outside
			}
			for _, r := range fd.Type.Results.List {
				if name := unexportedIn(r.Type, unexported[sf.dir]); name != "" && !slices.Contains(unexportedAllowed, funcName(sf, fd)) {
					t.Errorf("%s (%s) returns the unexported type %s", funcName(sf, fd), sf.rel, name)
				}
			}
		}
	}
}

// unexportedIn is the first of the package's unexported types that the type
// expression e names ("" when none).
func unexportedIn(e ast.Expr, types map[string]bool) string {
	var found string
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			return false // another package's: exported
		case *ast.Ident:
			if found == "" && types[n.Name] {
				found = n.Name
			}
		}
		return found == ""
	})
	return found
}

// vocabularyAllowed are the files still spelling a route of rundir's: the
// simulator command's help text.
var vocabularyAllowed = []string{"cmd/msgload/sim.go"}

// TestVocabularyInRundir: the APIs' routes and names are spelled in rundir
// alone (rundir.Route*, rundir.API*): no string literal outside it holds a
// route, and no comparison or case is against an API's name written out.
func TestVocabularyInRundir(t *testing.T) {
	routes := []string{"/api/v1/", "/oauth/token", "/messaging/v1/"}
	apiNames := map[string]bool{`"notify"`: true, `"messaging"`: true}
	for _, sf := range sources(t) {
		if sf.dir == "rundir" || slices.Contains(vocabularyAllowed, sf.rel) {
			continue
		}
		ast.Inspect(sf.f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				for _, r := range routes {
					if n.Kind == token.STRING && strings.Contains(n.Value, r) {
						t.Errorf("%s: the route %s spelled out (use rundir's Route constants)", sf.fset.Position(n.Pos()), n.Value)
					}
				}
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					for _, e := range []ast.Expr{n.X, n.Y} {
						if l, ok := e.(*ast.BasicLit); ok && apiNames[l.Value] {
							t.Errorf("%s: compared with the API name %s (use rundir.APIMessaging, rundir.APINotify)", sf.fset.Position(n.Pos()), l.Value)
						}
					}
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					if l, ok := e.(*ast.BasicLit); ok && apiNames[l.Value] {
						t.Errorf("%s: a case of the API name %s (use rundir.APIMessaging, rundir.APINotify)", sf.fset.Position(n.Pos()), l.Value)
					}
				}
			}
			return true
		})
	}
}
