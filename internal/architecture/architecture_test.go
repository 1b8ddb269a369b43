package architecture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

const (
	docPath = "docs/architecture.md"
	// The issue #22 bounds on the public surface.
	maxPublicPackages = 6
	maxExportedNames  = 350
)

// pkg is what the tests need of one entry of `go list -json ./...`.
type pkg struct {
	ImportPath     string
	Name           string
	Dir            string
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string
	Imports        []string
	Module         *struct{ Path string }
}

// rel is the package's path inside the module ("internal/policy", "host").
func (p pkg) rel() string {
	return strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, p.Module.Path), "/")
}

// public reports whether a package is outside internal/, examples/ and cmd/.
func public(rel string) bool {
	top, _, _ := strings.Cut(rel, "/")
	return top != "internal" && top != "examples" && top != "cmd" && !strings.Contains("/"+rel+"/", "/internal/")
}

var listed = sync.OnceValues(func() ([]pkg, error) {
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = testkit.Root()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -json ./... in %s: %v\n%s", cmd.Dir, err, stderr.Bytes())
	}
	var pkgs []pkg
	for d := json.NewDecoder(bytes.NewReader(out)); ; {
		var p pkg
		if err := d.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("reading go list's output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
})

func packages(t *testing.T) []pkg {
	t.Helper()
	pkgs, err := listed()
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// doc is what docs/architecture.md declares: the layers, lowest first, and
// each package's layer.
type doc struct {
	rank  map[string]int    // layer name -> position, 1 = lowest
	layer map[string]string // package -> layer name
	line  map[string]int    // package -> its row's line, for messages
}

var (
	layerItem  = regexp.MustCompile(`^([0-9]+)\. \*\*([a-z]+)\*\*`)
	packageRow = regexp.MustCompile("^\\| `([^`]+)` \\| ([a-z]+) \\|")
)

// readDoc reads the numbered list of layers under "## Layers" and the rows
// of the table under "## Packages".
func readDoc(t *testing.T) doc {
	t.Helper()
	f, err := os.Open(testkit.Path(docPath))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := doc{rank: map[string]int{}, layer: map[string]string{}, line: map[string]int{}}
	section := ""
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		if strings.HasPrefix(line, "## ") {
			section = strings.TrimPrefix(line, "## ")
			continue
		}
		switch section {
		case "Layers":
			if m := layerItem.FindStringSubmatch(line); m != nil {
				d.rank[m[2]] = len(d.rank) + 1
			}
		case "Packages":
			m := packageRow.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			if prev, dup := d.line[m[1]]; dup {
				t.Errorf("%s:%d: %s is listed twice (first on line %d)", docPath, n, m[1], prev)
			}
			d.layer[m[1]], d.line[m[1]] = m[2], n
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(d.rank) == 0 || len(d.layer) == 0 {
		t.Fatalf("%s: no numbered **layer** list under \"## Layers\" or no `package` | layer | rows under \"## Packages\"", docPath)
	}
	return d
}

func TestTheArchitectureDocNamesEveryPackageAndNoOther(t *testing.T) {
	t.Parallel()
	d := readDoc(t)
	inTree := map[string]bool{}
	for _, p := range packages(t) {
		inTree[p.rel()] = true
		if _, ok := d.layer[p.rel()]; !ok {
			t.Errorf("%s: package %s is missing from the Packages table; add a row: | `%s` | <layer> | <what it holds> |", docPath, p.rel(), p.rel())
		}
	}
	for name, line := range d.line {
		if !inTree[name] {
			t.Errorf("%s:%d: %s is listed but `go list ./...` has no such package; drop or rename the row", docPath, line, name)
		}
	}
	for name, layer := range d.layer {
		if d.rank[layer] == 0 {
			t.Errorf("%s:%d: %s is in layer %q, which the Layers list does not declare", docPath, d.line[name], name, layer)
		}
	}
}

func TestNoPackageImportsOneFromAHigherLayer(t *testing.T) {
	t.Parallel()
	d := readDoc(t)
	for _, p := range packages(t) {
		from := d.layer[p.rel()]
		if d.rank[from] == 0 {
			continue // no row or an undeclared layer: the test above reports it
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, p.Module.Path+"/") {
				continue
			}
			to := strings.TrimPrefix(imp, p.Module.Path+"/")
			toLayer, ok := d.layer[to]
			if ok && d.rank[toLayer] > d.rank[from] {
				t.Errorf("%s (layer %s) imports %s (layer %s, higher): move the shared part down or re-layer one of them in %s",
					p.rel(), from, to, toLayer, docPath)
			}
		}
	}
}

func TestAtMostSixPackagesAreOutsideInternalExamplesAndCmd(t *testing.T) {
	t.Parallel()
	var pub []string
	for _, p := range packages(t) {
		if public(p.rel()) {
			pub = append(pub, p.rel())
		}
	}
	if len(pub) > maxPublicPackages {
		t.Errorf("%d packages outside internal/, examples/ and cmd/, at most %d: %s", len(pub), maxPublicPackages, strings.Join(pub, " "))
	}
	t.Logf("%d public packages: %s", len(pub), strings.Join(pub, " "))
}

func TestAtMost350NamesAreExportedOutsideInternalExamplesAndCmd(t *testing.T) {
	t.Parallel()
	total := 0
	var per []string
	for _, p := range packages(t) {
		if !public(p.rel()) {
			continue
		}
		names, err := exportedNames(p)
		if err != nil {
			t.Fatal(err)
		}
		total += len(names)
		per = append(per, fmt.Sprintf("%s %d", p.rel(), len(names)))
	}
	if total > maxExportedNames {
		t.Errorf("%d exported names outside internal/, examples/ and cmd/, at most %d (%s)", total, maxExportedNames, strings.Join(per, ", "))
	}
	t.Logf("%d exported names: %s", total, strings.Join(per, ", "))
}

// exportedNames is the set of a package's exported top-level identifiers
// (functions, types, variables, constants) and the exported methods of its
// exported types, including an exported interface's methods, over every
// non-test file of the package whatever its build constraints (a name
// declared once per platform counts once).
func exportedNames(p pkg) (map[string]bool, error) {
	names := map[string]bool{}
	fset := token.NewFileSet()
	files := slices.Concat(p.GoFiles, p.CgoFiles, p.IgnoredGoFiles)
	sort.Strings(files)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if f.Name.Name != p.Name {
			continue // a generator or tool beside the package (package main under //go:build ignore)
		}
		for _, decl := range f.Decls {
			addExported(names, decl)
		}
	}
	return names, nil
}

func addExported(names map[string]bool, decl ast.Decl) {
	switch decl := decl.(type) {
	case *ast.FuncDecl:
		if !decl.Name.IsExported() {
			return
		}
		if decl.Recv == nil {
			names[decl.Name.Name] = true
		} else if recv := receiverType(decl.Recv.List[0].Type); ast.IsExported(recv) {
			names[recv+"."+decl.Name.Name] = true
		}
	case *ast.GenDecl:
		for _, spec := range decl.Specs {
			addSpec(names, spec)
		}
	}
}

func addSpec(names map[string]bool, spec ast.Spec) {
	switch spec := spec.(type) {
	case *ast.TypeSpec:
		if !spec.Name.IsExported() {
			return
		}
		names[spec.Name.Name] = true
		if iface, ok := spec.Type.(*ast.InterfaceType); ok {
			for _, m := range iface.Methods.List {
				for _, n := range m.Names {
					if n.IsExported() {
						names[spec.Name.Name+"."+n.Name] = true
					}
				}
			}
		}
	case *ast.ValueSpec:
		for _, n := range spec.Names {
			if n.IsExported() {
				names[n.Name] = true
			}
		}
	}
}

// receiverType is the name of a method's receiver type: T from T, *T, T[K]
// or *T[K].
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
