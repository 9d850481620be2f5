package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// servicePackages are the packages of quire's services: each New makes one.
var servicePackages = []string{"auth", "mfa", "documents", "audit", "idempotency", "attachments",
	"webhook", "transfer", "passkey", "sso", "live"}

// One instance of each service per process cannot be seen through the HTTP
// surface: the services keep their state in the store, and the one that
// keeps some in memory (transfer's slots of imports at once) was already
// shared. So this reads the source instead: `quire serve` (cmdServe) calls
// each service's New once, nothing else of the server (httpapi, web) calls
// one, and web does not import httpapi. The only New outside cmd/quire is
// auth's default second factor (mfa.New when Config.MFA is nil), which
// cmdServe never leaves nil.
func TestEveryServiceIsBuiltOnceByTheCompositionRoot(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	calls := map[string][]string{} // "pkg.New" → where
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "../.." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../..", path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "web/") {
			for _, im := range f.Imports {
				if p, _ := strconv.Unquote(im.Path.Value); p == "quire/httpapi" {
					t.Errorf("%s imports quire/httpapi", rel)
				}
			}
		}
		imported := map[string]bool{}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name, ok := strings.CutPrefix(p, "quire/")
			if ok && slices.Contains(servicePackages, name) && im.Name == nil {
				imported[name] = true
			}
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			where := rel + ":" + fn.Name.Name
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				fun := call.Fun
				if ix, ok := fun.(*ast.IndexExpr); ok { // New[S](...)
					fun = ix.X
				}
				sel, ok := fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "New" {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && imported[id.Name] {
					calls[id.Name+".New"] = append(calls[id.Name+".New"], where)
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range servicePackages {
		var inServe int
		for _, where := range calls[pkg+".New"] {
			switch {
			case where == "cmd/quire/serve.go:cmdServe":
				inServe++
			case strings.HasPrefix(where, "cmd/quire/"):
				// The admin subcommands are processes of their own.
			case strings.HasPrefix(where, "live/livetest/"):
				// The tests' quire serve for the live editor (a package
				// of test helpers, as storetest).
			case pkg == "mfa" && where == "auth/auth.go:New":
				// The default when Config.MFA is nil; cmdServe sets it.
			default:
				t.Errorf("%s.New is called in %s: only cmd/quire builds services", pkg, where)
			}
		}
		if pkg == "sso" {
			inServe += len(slices.DeleteFunc(slices.Clone(calls["sso.New"]), func(w string) bool {
				return w != "cmd/quire/sso.go:service" // oidcConfig.service, which cmdServe calls once
			}))
		}
		if inServe != 1 {
			t.Errorf("quire serve calls %s.New %d times, want once", pkg, inServe)
		}
	}
}

// quire.Store is the sum of the stores, for wiring: the engines implement
// it, the store suite and the bench drive it, and only cmd/quire hands it
// to the services, each of which takes the narrow store it declares.
func TestOnlyTheCompositionRootTakesQuireStore(t *testing.T) {
	t.Parallel()
	allowed := []string{"cmd/", "sqlite/", "postgres/", "sqlstore/", "storetest/", "bench/", "live/livetest/"}
	fset := token.NewFileSet()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../..", path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != "../.." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" ||
				slices.Contains(allowed, rel+"/")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || !strings.Contains(rel, "/") {
			return nil // the root package defines Store
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var fields *ast.FieldList
			switch n := n.(type) {
			case *ast.FuncType:
				fields = n.Params
			case *ast.StructType:
				fields = n.Fields
			default:
				return true
			}
			for _, fld := range fields.List {
				if sel, ok := fld.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Store" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "quire" {
						t.Errorf("%s takes quire.Store", fset.Position(fld.Pos()))
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
