package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Options configure a Runtime. The zero value is ready to use.
type Options struct {
	// CacheDir holds compiled plugin code across runs. Empty means
	// os.UserCacheDir()/toolwarden/wazero. If it cannot be created, compiled
	// code is cached in memory only and a warning is logged.
	CacheDir string
	// NoDiskCache keeps compiled code in memory only.
	NoDiskCache bool
	// Logger receives plugin log messages (the log import and WASI
	// stdout/stderr) with a "plugin" attribute. Nil means slog.Default().
	Logger *slog.Logger
	// PoolSize is the most instances kept per plugin, so the most events one
	// plugin runs at once. Zero means GOMAXPROCS.
	PoolSize int
	// Now is the clock for the envelopes' "time" key. Nil means time.Now.
	Now func() time.Time
	// InitTimeout bounds instantiation (start section and _initialize) and
	// the describe event at load. Zero means 5s; a plugin's timeout_ms wins
	// when larger.
	InitTimeout time.Duration

	// noDeadlines compiles modules as they are, without the stop flag or
	// wazero's context watch, and runs events without deadlines:
	// benchmarks use it to measure what deadlines cost. Never set outside
	// tests.
	noDeadlines bool
	// noReuse enters the guest for every check, even a deterministic
	// plugin's repeated input (deterministic.go): benchmarks of guest
	// cost, in this package's tests only.
	noReuse bool
}

// Runtime compiles and runs plugins. One Runtime serves every plugin of a
// host; it is safe for concurrent use. Close it to free all instances.
//
// A Runtime compiles each distinct binary once and keeps the compiled code
// until it is closed, so a process that builds many hosts one after another
// (a warm hook process, host.Settings.WithPluginRuntime) shares one Runtime
// among them and pays for decoding, validating and compiling a plugin only
// once.
type Runtime struct {
	r       wazero.Runtime
	cache   wazero.CompilationCache
	opts    Options
	log     *slog.Logger
	poolMax int

	// mu serialises compilation (wazero #2547: concurrent compiles through
	// a shared file cache can panic) and guards the fields below.
	mu      sync.Mutex
	modules map[uint64][]*module // by a fast hash of the binary (compile)
	wasi    bool
	plugins []*Plugin
	closed  bool

	// instrDir keeps instrumented modules across processes (instrcache.go);
	// empty without a disk cache.
	instrDir string
}

// wazeroInit makes wazero look up its own version once, before any runtime
// or cache exists: wazero v1.12 caches it in a global without
// synchronisation (internal/version), a data race when two runtimes are
// created at once. Once.Do orders every later reader after the write.
var wazeroInit sync.Once

func initWazero(ctx context.Context) {
	wazeroInit.Do(func() {
		_ = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig()).Close(ctx)
	})
}

// newCompilationCacheWithDir is wazero.NewCompilationCacheWithDir, which
// looks the version up too: the first call in a process does it inside
// wazeroInit, so that a process with a disk cache (every hook event) does
// not also build initWazero's throwaway runtime, a visible share of a hook
// process's start (docs/performance.md, "Process start").
func newCompilationCacheWithDir(dir string) (c wazero.CompilationCache, err error) {
	first := false
	wazeroInit.Do(func() {
		first = true
		c, err = wazero.NewCompilationCacheWithDir(dir)
	})
	if first {
		return c, err
	}
	return wazero.NewCompilationCacheWithDir(dir)
}

// NewRuntime creates a runtime with the compiler engine. Deadlines interrupt
// guest code through a stop flag that every module gets at load
// (deadline_flag.go), not through wazero's WithCloseOnContextDone, which
// costs a goroutine per call and an exit to Go at every loop iteration;
// -tags toolwarden_wazero_interrupt builds that instead (deadline_wazero.go).
func NewRuntime(ctx context.Context, opts Options) (*Runtime, error) {
	rt := &Runtime{opts: opts, modules: map[uint64][]*module{}}
	rt.log = opts.Logger
	if rt.log == nil {
		rt.log = slog.Default()
	}
	rt.poolMax = opts.PoolSize
	if rt.poolMax <= 0 {
		rt.poolMax = runtime.GOMAXPROCS(0)
	}
	if rt.opts.Now == nil {
		rt.opts.Now = time.Now
	}
	if rt.opts.InitTimeout <= 0 {
		rt.opts.InitTimeout = 5 * time.Second
	}

	cfg := wazero.NewRuntimeConfig()
	if !opts.NoDiskCache {
		dir, err := cacheDir(opts.CacheDir)
		if err == nil {
			rt.cache, err = newCompilationCacheWithDir(dir)
		}
		if err != nil {
			rt.log.Warn("plugin compilation cache disabled", "dir", dir, "err", err)
			rt.cache = nil
		} else {
			rt.instrDir = filepath.Join(dir, "instrumented")
		}
	}
	initWazero(ctx) // done already when the disk cache opened first
	if rt.cache == nil {
		rt.cache = wazero.NewCompilationCache()
	}
	cfg = configureInterrupt(cfg.WithCompilationCache(rt.cache), opts)
	rt.r = wazero.NewRuntimeWithConfig(ctx, cfg)

	_, err := rt.r.NewHostModuleBuilder(hostModule).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostInputRead), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("dst", "len").Export(importRead).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostOutputWrite), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("src", "len").Export(importWrite).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostLog), []api.ValueType{i32, i32, i32}, nil).
		WithParameterNames("level", "ptr", "len").Export(importLog).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostRegexCompile), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("ptr", "len").Export(importRegexCompile).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostRegexMatch), []api.ValueType{i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("handle", "ptr", "len").Export(importRegexMatch).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostRegexError), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("dst", "cap").Export(importRegexError).
		Instantiate(ctx)
	if err != nil {
		_ = rt.r.Close(ctx)
		return nil, fmt.Errorf("plugin runtime: host module: %w", err)
	}
	return rt, nil
}

func cacheDir(dir string) (string, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "toolwarden", "wazero")
	}
	return dir, os.MkdirAll(dir, 0o700)
}

// Close closes every plugin and instance of the runtime and the runtime
// itself. Later events fail with a FaultClosed; an event that is running is
// stopped at its guest's next check and fails with a FaultClosed too, and
// its instance is then discarded (its memory stays mapped until the guest
// has stopped).
func (rt *Runtime) Close(ctx context.Context) error {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil
	}
	rt.closed = true
	plugins := rt.plugins
	rt.plugins = nil
	rt.mu.Unlock()
	for _, p := range plugins {
		p.pool.close()
	}
	err := rt.r.Close(ctx)
	if cerr := rt.cache.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// forget drops a closed plugin from the runtime's list.
func (rt *Runtime) forget(p *Plugin) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for i, q := range rt.plugins {
		if q == p {
			rt.plugins = append(rt.plugins[:i], rt.plugins[i+1:]...)
			return
		}
	}
}

var errClosed = errors.New("plugin runtime is closed")

// ensureWASI links wasi_snapshot_preview1 into the runtime the first time a
// module that imports it is loaded. Modules that do not import it never see
// it. Callers hold rt.mu.
func (rt *Runtime) ensureWASI(ctx context.Context) error {
	if rt.wasi {
		return nil
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt.r); err != nil {
		return fmt.Errorf("plugin runtime: wasi: %w", err)
	}
	rt.wasi = true
	return nil
}
