package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"text/template"

	kits "github.com/toolwarden/toolwarden/pdk"
)

// toolwardenModule is the module a Go plugin depends on for pdk/go.
const toolwardenModule = "github.com/toolwarden/toolwarden"

// goKitDir is where a Go project carries its copy of the kit, as a
// module named toolwardenModule holding only pdk/go: go.mod replaces the
// module by it, so a build needs no proxy (a version of this module that
// no proxy serves used to fail the first build with a bare 403).
const goKitDir = "toolwarden-pdk"

// goNoVersion is the version go.mod requires of toolwardenModule when a
// replace directive supplies it: any version would do, and this one says
// that none was published.
const goNoVersion = "v0.0.0-00010101000000-000000000000"

// ascVersion is the AssemblyScript compiler a new project pins: the one
// scripts/npm/package.json pins for the kit's own tests.
const ascVersion = "0.28.20"

// pluginLangs are the languages `plugin new` writes, in the order of
// docs/plugin-languages.md.
var pluginLangs = []string{"go", "rust", "c", "assemblyscript", "wat"}

// pluginNameRE is what a plugin name may be: it becomes the describe name
// (1-64 bytes), a file name, a Go module path, a Cargo package and a TOML
// key, so it keeps to what all of them accept. Compiled on first use, not
// at every process start.
var pluginNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`) })

// projectFile is one file of a new project: where it goes, where its text
// comes from (a template under pdk/templates, or a kit source copied as it
// is), and what it is for the README's table.
type projectFile struct {
	Path string
	from string
	copy bool
	What string
}

func projectFiles(lang, name string) []projectFile {
	common := []projectFile{
		{Path: "build.sh", from: lang + "/build.sh.tmpl", What: "builds `" + name + ".wasm`; finds the toolchain or says how to get it (exit 3)"},
		{Path: "cases.json", from: "common/cases.json.tmpl", What: "test cases: `toolwarden plugin test " + name + ".wasm cases.json`"},
		{Path: "toolwarden.toml", from: "common/toolwarden.toml.tmpl", What: "a config that enforces the plugin (`[policies." + name + "]`)"},
		{Path: "call.json", from: "common/call.json.tmpl", What: "a call for `toolwarden check --config toolwarden.toml call.json`"},
		{Path: ".gitignore", from: "common/gitignore.tmpl", What: "ignores the built module"},
	}
	var own []projectFile
	switch lang {
	case "go":
		own = []projectFile{
			{Path: "main.go", from: "go/main.go.tmpl", What: "the plugin"},
			{Path: "go.mod", from: "go/go.mod.tmpl", What: "depends on `" + toolwardenModule + "` for the kit, `pdk/go`, replaced by a folder"},
			{Path: goKitDir + "/go.mod", from: "go/kit-go.mod.tmpl", What: "the Go kit, copied from toolwarden's `pdk/go` (no network needed)"},
		}
		srcs, _ := fs.Glob(kits.Files, "go/*.go")
		for _, s := range srcs {
			if !strings.HasSuffix(s, "_test.go") {
				own = append(own, projectFile{Path: goKitDir + "/pdk/" + s, from: s, copy: true, What: "the Go kit"})
			}
		}
	case "rust":
		own = []projectFile{
			{Path: "src/lib.rs", from: "rust/lib.rs.tmpl", What: "the plugin"},
			{Path: "Cargo.toml", from: "rust/Cargo.toml.tmpl", What: "for cargo and editors (`./build.sh` needs no cargo)"},
			{Path: ".cargo/config.toml", from: "rust/cargo-config.toml.tmpl", What: "the flags `./build.sh` uses, for cargo builds"},
			{Path: "toolwarden-pdk/Cargo.toml", from: "rust/Cargo.toml", copy: true, What: "the Rust kit, copied from toolwarden's `pdk/rust`"},
		}
		srcs, _ := fs.Glob(kits.Files, "rust/src/*.rs")
		for _, s := range srcs {
			own = append(own, projectFile{Path: "toolwarden-pdk/src/" + path.Base(s), from: s, copy: true, What: "the Rust kit"})
		}
	case "c":
		own = []projectFile{
			{Path: name + ".c", from: "c/plugin.c.tmpl", What: "the plugin"},
			{Path: "toolwarden.h", from: "c/toolwarden.h", copy: true, What: "the C kit, copied from toolwarden's `pdk/c`"},
		}
	case "assemblyscript":
		own = []projectFile{
			{Path: "assembly/index.ts", from: "assemblyscript/index.ts.tmpl", What: "the plugin"},
			{Path: "toolwarden/index.ts", from: "assemblyscript/assembly/index.ts", copy: true, What: "the AssemblyScript kit, copied from toolwarden's `pdk/assemblyscript`"},
			{Path: "toolwarden/runtime.ts", from: "assemblyscript/assembly/runtime.ts", copy: true, What: "the kit's arena runtime (every event's memory freed in one step)"},
			{Path: "toolwarden/regex.ts", from: "assemblyscript/assembly/regex.ts", copy: true, What: "the kit's linear-time regex (Go's RE2 syntax, a subset)"},
			{Path: "toolwarden/shellwords.ts", from: "assemblyscript/assembly/shellwords.ts", copy: true, What: "the kit's shell-word splitter"},
			{Path: "package.json", from: "assemblyscript/package.json.tmpl", What: "pins the AssemblyScript compiler, " + ascVersion},
			{Path: "tsconfig.json", from: "assemblyscript/tsconfig.json.tmpl", What: "for editors"},
		}
	case "wat":
		own = []projectFile{
			{Path: name + ".wat", from: "wat/plugin.wat.tmpl", What: "the plugin, by hand against the ABI"},
		}
	}
	files := append([]projectFile{{Path: "README.md", from: "common/README.md.tmpl", What: "this file"}}, own...)
	return append(files, common...)
}

// projectData is what the templates see.
type projectData struct {
	Name, Ident, Lang, LangTitle string
	// GoRequire is the version of toolwardenModule go.mod requires, and
	// GoReplace the folder that supplies it: the kit the project carries
	// ("./toolwarden-pdk") or a local checkout.
	GoRequire, GoReplace string
	ASCVersion           string
	// DescribeWAT is the describe answer as a WAT string literal, and
	// DescribeLen its length in bytes.
	DescribeWAT string
	DescribeLen int
	BuildWhat   string
	BuildNotes  string
	Files       []projectFile
}

var langTitles = map[string]string{"go": "Go", "rust": "Rust", "c": "C", "assemblyscript": "AssemblyScript", "wat": "WebAssembly text (WAT)"}

func runPluginNew(e *env, args []string) int {
	fset := newPluginFlags(e, "new")
	lang := fset.String("lang", "", "the plugin's language: "+strings.Join(pluginLangs, ", "))
	dir := fset.String("dir", "", "where to create the project (default: ./NAME); must not exist or be empty")
	pdkPath := fset.String("pdk", "", "Go: a local checkout of toolwarden to build against (a replace directive in go.mod)")
	pos, code, ok := fset.parseInterleaved(args)
	if !ok {
		return code
	}
	fail := func(format string, args ...any) int {
		fmt.Fprintf(e.stderr, "toolwarden plugin new: "+format+"\n", args...)
		return exitUsage
	}
	if len(pos) != 1 {
		return fail("want one NAME (toolwarden plugin new --lang %s NAME)", strings.Join(pluginLangs, "|"))
	}
	name := pos[0]
	if !pluginNameRE().MatchString(name) {
		return fail("name %q: want a lower-case letter, then up to 63 lower-case letters, digits, - or _ (it names the module, the package and the policy)", name)
	}
	if _, ok := langTitles[*lang]; !ok {
		if *lang == "" {
			return fail("--lang is required: %s", strings.Join(pluginLangs, ", "))
		}
		return fail("--lang %q: want one of %s", *lang, strings.Join(pluginLangs, ", "))
	}
	if *pdkPath != "" && *lang != "go" {
		return fail("--pdk is for --lang go; the %s kit is copied into the project", *lang)
	}
	if *dir == "" {
		*dir = name
	}
	if ents, err := os.ReadDir(*dir); err == nil && len(ents) > 0 {
		fmt.Fprintf(e.stderr, "toolwarden plugin new: %s exists and is not empty; choose another --dir\n", *dir)
		return exitError
	}
	data, note, err := newProjectData(*lang, name, *dir, *pdkPath)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden plugin new:", err)
		return exitError
	}
	if err := writeProject(*dir, data); err != nil {
		fmt.Fprintln(e.stderr, "toolwarden plugin new:", err)
		return exitError
	}
	if note != "" {
		fmt.Fprintln(e.stderr, "toolwarden plugin new: note:", note)
	}
	d := *dir
	fmt.Fprintf(e.stdout, "created a %s plugin %q in %s\n\nnext:\n", data.LangTitle, name, d)
	fmt.Fprintf(e.stdout, "  %s\n", filepath.Join(d, "build.sh"))
	fmt.Fprintf(e.stdout, "  toolwarden plugin test %s %s\n", filepath.Join(d, name+".wasm"), filepath.Join(d, "cases.json"))
	fmt.Fprintf(e.stdout, "  toolwarden check --config %s %s   # exit 20: denied\n", filepath.Join(d, "toolwarden.toml"), filepath.Join(d, "call.json"))
	return exitOK
}

func newProjectData(lang, name, dir, pdkPath string) (*projectData, string, error) {
	desc := `{"name":"` + name + `","version":"0.1.0","events":["list","check","observe"]}`
	data := &projectData{
		Name: name, Ident: strings.ReplaceAll(name, "-", "_"), Lang: lang, LangTitle: langTitles[lang],
		ASCVersion:  ascVersion,
		DescribeWAT: strings.ReplaceAll(desc, `"`, `\"`), DescribeLen: len(desc),
		Files: projectFiles(lang, name),
	}
	data.BuildWhat, data.BuildNotes = buildNotes(lang)
	var note string
	if lang == "go" {
		var err error
		data.GoRequire, data.GoReplace, note, err = goDependency(dir, pdkPath)
		if err != nil {
			return nil, "", err
		}
		if data.GoReplace == "./"+goKitDir {
			data.BuildNotes += "\n\n`go.mod` builds against `" + goKitDir + "/`, the copy of the Go kit this project carries (a `replace` directive), so a build needs no network. To build against the published module instead, drop the `replace` line and `go get " + toolwardenModule + "@latest`; against a local checkout, `go mod edit -replace " + toolwardenModule + "=/path/to/toolwarden`."
		} else {
			data.BuildNotes += "\n\n`go.mod` builds against the toolwarden checkout at `" + data.GoReplace + "` (a `replace` directive). To build against the kit this project carries instead (no checkout, no network): `go mod edit -replace " + toolwardenModule + "=./" + goKitDir + "`."
		}
	}
	return data, note, nil
}

// goDependency decides how go.mod reaches pdk/go: a replace directive to
// --pdk, or to the toolwarden checkout the project is created in (to work
// on the kit and a plugin together); else to the copy of the kit the
// project carries, which needs no network and is exactly the kit of this
// binary.
func goDependency(dir, pdkPath string) (require, replace, note string, err error) {
	checkout := pdkPath
	if checkout != "" {
		if !isToolwardenCheckout(checkout) {
			return "", "", "", fmt.Errorf("--pdk %s: not a toolwarden checkout (want a go.mod for module %s and a pdk/go folder)", pdkPath, toolwardenModule)
		}
	} else if abs, err := filepath.Abs(dir); err == nil {
		for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
			if isToolwardenCheckout(d) {
				checkout = d
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if checkout != "" {
		return goNoVersion, replacePath(dir, checkout), "", nil
	}
	return goNoVersion, "./" + goKitDir, "", nil
}

// replacePath is checkout as a replace directive wants it: relative to the
// project when it can be ("../toolwarden"), else absolute.
func replacePath(dir, checkout string) string {
	absDir, err1 := filepath.Abs(dir)
	absCk, err2 := filepath.Abs(checkout)
	if err1 != nil || err2 != nil {
		return checkout
	}
	rel, err := filepath.Rel(absDir, absCk)
	if err != nil {
		return absCk
	}
	rel = filepath.ToSlash(rel)
	if !strings.HasPrefix(rel, "../") && rel != ".." {
		rel = "./" + rel
	}
	return rel
}

// isToolwardenCheckout reports a folder whose go.mod declares the
// toolwarden module and that has the Go kit.
func isToolwardenCheckout(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if mod, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			if strings.Trim(strings.TrimSpace(mod), `"`) != toolwardenModule {
				return false
			}
			st, err := os.Stat(filepath.Join(dir, "pdk", "go"))
			return err == nil && st.IsDir()
		}
	}
	return false
}

func buildNotes(lang string) (what, notes string) {
	switch lang {
	case "go":
		return "GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared",
			"`./build.sh` runs `GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath`. " +
				"`-buildmode=c-shared` matters: without it the module is a WASI command whose Go runtime " +
				"never starts, and every event traps (\"wasmexport function called before runtime " +
				"initialization\"). Go 1.24 or later. The module is about 2 MB and compiles in about a " +
				"second; the host caches it. The logic also runs natively: `Plugin.Handle` in a plain `go test`."
	case "rust":
		return "rustc --target wasm32-unknown-unknown, no cargo needed",
			"`./build.sh` uses plain `rustc` (Rust 1.63 or later) with the `wasm32-unknown-unknown` " +
				"standard library: the first of `$RUSTC`, `rustc` on PATH and `/usr/bin/rustc` that has it " +
				"(`rustc --print target-libdir --target wasm32-unknown-unknown` exists). A rustup toolchain " +
				"needs `rustup target add wasm32-unknown-unknown`; Debian and Ubuntu's rustc needs " +
				"`apt-get install libstd-rust-dev-wasm32`. The kit is in `toolwarden-pdk/`, a copy of " +
				"toolwarden's `pdk/rust` (no registry). With cargo: `cargo build --release --target " +
				"wasm32-unknown-unknown`."
	case "c":
		return "clang --target=wasm32, freestanding",
			"`./build.sh` builds freestanding (`clang --target=wasm32 -nostdlib`, needs clang and lld); " +
				"`./build.sh --wasi` builds against wasi-libc as a reactor (`--target=wasm32-wasi " +
				"-mexec-model=reactor`; needs wasi-libc and the wasm32 compiler-rt builtins) when the plugin " +
				"needs libc. Either way it imports nothing from WASI. The kit is `toolwarden.h`, a copy of " +
				"toolwarden's `pdk/c/toolwarden.h`."
	case "assemblyscript":
		return "asc from npm, with the kit's runtime",
			"`./build.sh` runs `asc` (Node.js 18 or later) with the kit's arena runtime and abort handler " +
				"(the host refuses the default `env.abort` import). It uses `$ASC`, else " +
				"`node_modules/.bin/asc`, else `asc` on PATH, else runs `npm install` first (`package.json` " +
				"pins assemblyscript " + ascVersion + "). The kit is in `toolwarden/`, a copy of toolwarden's " +
				"`pdk/assemblyscript/assembly`."
	default:
		return "wat2wasm",
			"`./build.sh` runs wabt's `wat2wasm`. There is no kit: the module implements `pdk/ABI.md` " +
				"itself (exports, imports, a small JSON reader). The describe answer sits at offset 768; " +
				"its length is the constant passed to `output_write` in the describe branch."
	}
}

// writeProject renders every file of a project into dir.
func writeProject(dir string, data *projectData) error {
	for _, f := range data.Files {
		src, err := fs.ReadFile(kits.Files, kitPath(f))
		if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		out := src
		if !f.copy {
			t, err := template.New(f.from).Option("missingkey=error").Parse(string(src))
			if err != nil {
				return fmt.Errorf("%s: %w", f.from, err)
			}
			var b bytes.Buffer
			if err := t.Execute(&b, data); err != nil {
				return fmt.Errorf("%s: %w", f.from, err)
			}
			out = b.Bytes()
		}
		dst := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(f.Path, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(dst, out, mode); err != nil {
			return err
		}
	}
	return nil
}

// kitPath is where a file's source sits in kits.Files.
func kitPath(f projectFile) string {
	if f.copy {
		return f.from
	}
	return "templates/" + f.from
}
