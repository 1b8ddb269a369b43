package proxy

import (
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// startProfiles starts a CPU profile and an execution trace of the proxy
// when TOOLWARDEN_CPUPROFILE or TOOLWARDEN_TRACE name a file to write, for
// profiling the proxy inside the process a client started (the benchmarks
// in internal/e2e, an agent). The returned function stops them; Run calls it
// when the client goes away.
func startProfiles() (stop func()) {
	var stops []func()
	if path := os.Getenv("TOOLWARDEN_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
			} else {
				f.Close()
			}
		}
	}
	if path := os.Getenv("TOOLWARDEN_TRACE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if trace.Start(f) == nil {
				stops = append(stops, func() { trace.Stop(); f.Close() })
			} else {
				f.Close()
			}
		}
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}
