// Package plugin runs toolwarden's policy plugins: WebAssembly modules that
// speak ABI v1 (pdk/ABI.md), sandboxed by wazero.
//
// One Runtime serves a host. It compiles each distinct module once,
// serially, and caches compiled code on disk (os.UserCacheDir()/toolwarden/
// wazero by default), so a restart loads in tens of milliseconds instead of
// recompiling. Load turns a [policies.<name>] table into a *Plugin: the ABI
// marker, export signatures and imports are checked on the compiled module
// before any guest code runs, one warm instance answers describe, and later
// events draw instances from a pool (at most GOMAXPROCS per plugin), each
// with its function handle, call stack and buffers cached, so a warm event
// makes no allocations.
//
// Every event runs under a deadline that interrupts guest code, with caps
// on memory, input and output. The deadline is a stop flag that every
// module gets at load (instrument.go: a check at each loop header, at the
// entry of each function that makes calls, after bulk memory instructions),
// set by a timer per instance; it stops loops, recursion and call trees,
// and a spinning guest still lets Go's stop-the-world phases run. Any
// failure — trap, timeout, memory limit, bad output, error code — discards
// the instance and becomes the policy's on_error verdict with a reason that
// names the plugin and the fault:
//
//	plugin "argguard": timeout after 100ms
//
// A *Plugin implements policy.Checker, policy.Observer and policy.Lister.
// A policy that fails to load is still returned, answering every event with
// its on_error verdict, so a broken plugin fails closed and says why.
//
// Typical use in a host:
//
//	rt, err := plugin.NewRuntime(ctx, plugin.Options{})
//	defer rt.Close(ctx)
//	plugins, err := plugin.LoadAll(ctx, rt, cfg.Policies, plugin.Builtins(plugins.Modules()))
//	if err != nil { /* one line per failed policy, with its file:line:col */ }
//	for _, p := range plugins {
//		if p.Matches(app, tool) {
//			v := p.Check(ctx, &policy.CheckInput{...})
//		}
//	}
package plugin
