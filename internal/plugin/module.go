package plugin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/maphash"
	"sort"
	"strings"

	"github.com/tetratelabs/wazero"

	"github.com/toolwarden/toolwarden/internal/instrument"
)

// module is a compiled plugin binary that passed the ABI checks. Several
// policies may share one (two argguard policies with different configs).
type module struct {
	bin         []byte // the binary as loaded (before instrumenting)
	compiled    wazero.CompiledModule
	imports     []Extern
	exports     []Extern
	usesWASI    bool
	hasInit     bool
	minMemPages uint32
}

// problems lists every way a binary breaks ABI v1 that can be seen without
// compiling it: missing exports and imports outside the granted set.
func problems(imports, exports []Extern) []string {
	var out []string
	have := map[string]string{}
	for _, e := range exports {
		have[e.Name] = e.Kind
	}
	if kind, ok := have[markerV1]; !ok {
		other := ""
		for _, e := range exports {
			if strings.HasPrefix(e.Name, markerPrefix) {
				other = e.Name
			}
		}
		if other != "" {
			out = append(out, fmt.Sprintf("exports ABI marker %q; this host speaks v1 (needs %q)", other, markerV1))
		} else {
			out = append(out, fmt.Sprintf("missing ABI marker export %q (is this a toolwarden plugin? see pdk/ABI.md)", markerV1))
		}
	} else if kind != "func" {
		out = append(out, fmt.Sprintf("ABI marker %q is a %s export, want a function () -> ()", markerV1, kind))
	}
	if kind, ok := have[handleExport]; !ok {
		out = append(out, fmt.Sprintf("missing export %q", handleExport))
	} else if kind != "func" {
		out = append(out, fmt.Sprintf("export %q is a %s, want a function (i32, i32) -> i32", handleExport, kind))
	}
	if kind, ok := have[memoryExport]; !ok {
		out = append(out, fmt.Sprintf("missing export %q (the guest must export its linear memory)", memoryExport))
	} else if kind != "memory" {
		out = append(out, fmt.Sprintf("export %q is a %s, want a memory", memoryExport, kind))
	}
	if kind, ok := have[initExport]; ok && kind != "func" {
		out = append(out, fmt.Sprintf("export %q is a %s, want a function () -> ()", initExport, kind))
	}
	for _, e := range exports {
		if strings.HasPrefix(e.Name, instrument.ReservedPrefix) {
			out = append(out, fmt.Sprintf("export %q uses a name reserved for the host (prefix %q)", e.Name, instrument.ReservedPrefix))
		}
	}
	for _, im := range imports {
		switch {
		case im.Module == hostModule && im.Kind == "func":
			if _, ok := hostSigs[im.Name]; !ok {
				out = append(out, fmt.Sprintf("import %q is not granted: the toolwarden module provides only input_read, output_write, log, regex_compile, regex_match and regex_error", im.Key()))
			}
		case im.Module == wasiModule && im.Kind == "func":
		case im.Kind != "func":
			out = append(out, fmt.Sprintf("import %q (%s) is not granted: a plugin must define and export its own memory, tables and globals", im.Key(), im.Kind))
		default:
			out = append(out, fmt.Sprintf("import %q is not granted (granted: %s)", im.Key(), grantedImport))
		}
	}
	return out
}

// signatureProblems checks the function types on a compiled module.
func signatureProblems(cm wazero.CompiledModule) []string {
	var out []string
	ex := cm.ExportedFunctions()
	want := func(name string, s signature) {
		if d, ok := ex[name]; ok {
			if got := sigOf(d); !got.equal(s) {
				out = append(out, fmt.Sprintf("export %q has signature %s, want %s", name, got, s))
			}
		}
	}
	want(markerV1, sigVoid)
	want(handleExport, sigHandle)
	want(initExport, sigVoid)
	for _, d := range cm.ImportedFunctions() {
		mod, name, _ := d.Import()
		if mod != hostModule {
			continue
		}
		if s, ok := hostSigs[name]; ok {
			if got := sigOf(d); !got.equal(s) {
				out = append(out, fmt.Sprintf("import %q has signature %s, want %s", mod+"."+name, got, s))
			}
		}
	}
	return out
}

// compile checks, instruments and compiles a binary, once per distinct
// binary per runtime, serially. wazero's compilation cache sees (and keys
// on) the instrumented bytes.
//
// A binary compiled before is found by a fast hash and confirmed byte for
// byte, without the checks and the SHA-256 a new one needs: a runtime that
// outlives its hosts (a warm hook process) loads the same binaries at
// every event.
func (rt *Runtime) compile(ctx context.Context, bin []byte) (*module, error) {
	quick := maphash.Bytes(moduleSeed, bin)
	rt.mu.Lock()
	m, err := rt.compiled(quick, bin)
	rt.mu.Unlock()
	if m != nil || err != nil {
		return m, err
	}

	imports, exports, err := readExterns(bin)
	if err != nil {
		return nil, err
	}
	if ps := problems(imports, exports); len(ps) > 0 {
		return nil, errors.New(strings.Join(ps, "; "))
	}
	sum := sha256.Sum256(bin)

	rt.mu.Lock()
	defer rt.mu.Unlock()
	// Another caller may have compiled the same binary meanwhile.
	if m, err := rt.compiled(quick, bin); m != nil || err != nil {
		return m, err
	}
	cctx, ibin, err := rt.forCompile(ctx, bin, sum)
	if err != nil {
		return nil, fmt.Errorf("instrument: %w", err)
	}
	cm, err := rt.r.CompileModule(cctx, ibin)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if ps := signatureProblems(cm); len(ps) > 0 {
		_ = cm.Close(ctx)
		return nil, errors.New(strings.Join(ps, "; "))
	}
	m = &module{compiled: cm, imports: imports, exports: exports}
	for _, im := range imports {
		if im.Module == wasiModule {
			m.usesWASI = true
		}
	}
	_, m.hasInit = cm.ExportedFunctions()[initExport]
	if md, ok := cm.ExportedMemories()[memoryExport]; ok {
		m.minMemPages = md.Min()
	}
	if m.usesWASI {
		if err := rt.ensureWASI(ctx); err != nil {
			_ = cm.Close(ctx)
			return nil, err
		}
	}
	m.bin = bytes.Clone(bin)
	rt.modules[quick] = append(rt.modules[quick], m)
	return m, nil
}

// compiled finds the module compiled from bin (nil if none), or fails when
// the runtime is closed. Callers hold rt.mu.
func (rt *Runtime) compiled(quick uint64, bin []byte) (*module, error) {
	if rt.closed {
		return nil, errClosed
	}
	for _, m := range rt.modules[quick] {
		if bytes.Equal(m.bin, bin) {
			return m, nil
		}
	}
	return nil, nil
}

// moduleSeed seeds the quick lookup of compiled binaries (compile).
var moduleSeed = maphash.MakeSeed()

// Info describes a binary as `toolwarden plugin inspect` shows it.
type Info struct {
	// ABI is "v1" when the binary passes every load-time check.
	ABI string
	// Problems lists every failed check (empty when ABI is "v1").
	Problems []string
	Imports  []Extern
	Exports  []Extern
	// UsesWASI says the module imports wasi_snapshot_preview1.
	UsesWASI bool
	// MinMemoryPages is the declared minimum of the exported memory.
	MinMemoryPages uint32
}

// Inspect checks a binary against ABI v1 without running any guest code.
// It fails only when the bytes are not a WebAssembly module; ABI problems
// are listed in Info.Problems.
func (rt *Runtime) Inspect(ctx context.Context, bin []byte) (*Info, error) {
	imports, exports, err := readExterns(bin)
	if err != nil {
		return nil, err
	}
	info := &Info{Imports: imports, Exports: exports, Problems: problems(imports, exports)}
	initWazero(ctx)
	// Compile in a throwaway runtime: Inspect must not touch the shared
	// compilation cache with a binary that may be refused. What is compiled
	// is what Load compiles: the instrumented module.
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig())
	defer r.Close(ctx)
	ibin, err := forInspect(bin)
	if err != nil {
		var ie *instrument.Error
		if !errors.As(err, &ie) || !ie.Reserved() {
			info.Problems = append(info.Problems, "instrument: "+err.Error())
		}
		ibin = bin // still list what the module declares
	}
	cm, err := r.CompileModule(ctx, ibin)
	if err != nil {
		info.Problems = append(info.Problems, "compile: "+err.Error())
	} else {
		info.Problems = append(info.Problems, signatureProblems(cm)...)
		ex := cm.ExportedFunctions()
		for i := range info.Exports {
			if d, ok := ex[info.Exports[i].Name]; ok && info.Exports[i].Kind == "func" {
				info.Exports[i].Signature = sigOf(d).String()
			}
		}
		sigs := map[string]string{}
		for _, d := range cm.ImportedFunctions() {
			mod, name, _ := d.Import()
			sigs[mod+"."+name] = sigOf(d).String()
		}
		for i := range info.Imports {
			info.Imports[i].Signature = sigs[info.Imports[i].Key()]
		}
		if md, ok := cm.ExportedMemories()[memoryExport]; ok {
			info.MinMemoryPages = md.Min()
		}
	}
	for _, im := range imports {
		if im.Module == wasiModule {
			info.UsesWASI = true
		}
	}
	sort.SliceStable(info.Imports, func(i, j int) bool { return info.Imports[i].Key() < info.Imports[j].Key() })
	sort.SliceStable(info.Exports, func(i, j int) bool { return info.Exports[i].Name < info.Exports[j].Name })
	if len(info.Problems) == 0 {
		info.ABI = "v1"
	}
	return info, nil
}
