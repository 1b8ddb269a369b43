package architecture

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

func TestTheCountTakesExportedTopLevelNamesAndTheMethodsOfExportedTypesOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"a.go": `package kit
type Plugin interface{ Check() error; name() string }
type Event struct{ Name string }
type hidden struct{}
func (Event) Tool() string { return "" }
func (*Event) set() {}
func (hidden) Exported() {}
func (l List[T]) Len() int { return 0 }
type List[T any] []T
func New() *Event { return nil }
func helper() {}
const A, b = 1, 2
var (V int; w int)
`,
		"abi_wasip1.go": "//go:build wasip1\n\npackage kit\n\nfunc Host() {}\n",
		"abi_other.go":  "//go:build !wasip1\n\npackage kit\n\nfunc Host() {}\n",
		"gen.go":        "//go:build ignore\n\npackage main\n\nfunc Generate() {}\n",
		"a_test.go":     "package kit\n\nfunc Exported() {}\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := pkg{Name: "kit", Dir: dir, GoFiles: []string{"a.go", "abi_other.go"}, IgnoredGoFiles: []string{"abi_wasip1.go", "gen.go"}}
	names, err := exportedNames(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for n := range names {
		got = append(got, n)
	}
	sort.Strings(got)
	want := []string{"A", "Event", "Event.Tool", "Host", "List", "List.Len", "New", "Plugin", "Plugin.Check", "V"}
	if !slices.Equal(got, want) {
		t.Fatalf("counted %v\nwant    %v", got, want)
	}
}

func TestOnlyPackagesOutsideInternalExamplesAndCmdArePublic(t *testing.T) {
	t.Parallel()
	for rel, want := range map[string]bool{
		"host": true, "sdk": true, "pdk/go": true, "plugins/argguard": true,
		"internal/policy": false, "cmd/toolwarden": false, "examples/agent": false,
		"cmd/internal/cli": false, "host/internal/bench": false, "internalize": true,
	} {
		if got := public(rel); got != want {
			t.Errorf("public(%q) = %v, want %v", rel, got, want)
		}
	}
}
