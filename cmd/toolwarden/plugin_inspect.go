package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/plugin"
)

// inspectReport is `plugin inspect --json`. Every key is snake_case, like
// the ABI's own JSON; plugin.Extern has no JSON names of its own, so the
// report spells its members out (externJSON).
type inspectReport struct {
	File     string        `json:"file"`
	Size     int           `json:"size"`
	SHA256   string        `json:"sha256"`
	ABI      string        `json:"abi"`
	Refused  bool          `json:"refused"`
	Problems []string      `json:"problems,omitempty"`
	WASI     bool          `json:"wasi"`
	Imports  []externJSON  `json:"imports"`
	Exports  []externJSON  `json:"exports"`
	Describe *describeJSON `json:"describe,omitempty"`
	Error    string        `json:"error,omitempty"`
	LoadMs   float64       `json:"load_ms,omitempty"`
}

type externJSON struct {
	Module    string `json:"module,omitempty"`
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Signature string `json:"signature,omitempty"`
}

type describeJSON struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	Events  []string `json:"events"`
}

func externsJSON(xs []plugin.Extern) []externJSON {
	out := make([]externJSON, len(xs))
	for i, x := range xs {
		out[i] = externJSON{Module: x.Module, Name: x.Name, Kind: x.Kind, Signature: x.Signature}
	}
	return out
}

func runPluginInspect(e *env, args []string) int {
	fs := newPluginFlags(e, "inspect")
	cfgJSON := fs.String("config", "{}", "the policy's config table, as JSON, for describe")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, code, ok := fs.parseInterleaved(args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return fs.usageError("want one PLUGIN (a .wasm file or builtin:NAME)")
	}
	file := pos[0]
	var cfg map[string]any
	if err := json.Unmarshal([]byte(*cfgJSON), &cfg); err != nil {
		fmt.Fprintf(e.stderr, "toolwarden plugin inspect: --config: %v\n", err)
		return exitUsage
	}
	bin, err := readPlugin(file)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden plugin inspect:", err)
		return exitError
	}
	ctx := context.Background()
	// The plugin's own log lines (a Go runtime's complaint, say) follow the
	// verdict instead of pushing it down.
	var logs bytes.Buffer
	rt, err := pluginRuntimeLogTo(ctx, e, &logs)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden plugin inspect:", err)
		return exitError
	}
	defer rt.Close(ctx)

	rep := inspect(ctx, rt, file, bin, cfg)
	// A refusal is the first thing said, on stderr, so that neither a
	// script reading stdout nor a person skimming the table misses it.
	if rep.Refused {
		fmt.Fprintf(e.stderr, "toolwarden plugin inspect: %s: refused: %s\n", file, refusal(rep))
	}
	_, _ = logs.WriteTo(e.stderr)
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		printInspect(e.stdout, rep)
	}
	if rep.Refused {
		return exitError
	}
	return exitOK
}

// inspect checks a binary, then loads it with cfg when the checks pass.
func inspect(ctx context.Context, rt *plugin.Runtime, file string, bin []byte, cfg map[string]any) *inspectReport {
	sum := sha256.Sum256(bin)
	rep := &inspectReport{File: file, Size: len(bin), SHA256: hex.EncodeToString(sum[:]), ABI: "refused", Refused: true}
	info, err := rt.Inspect(ctx, bin)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	rep.Problems, rep.WASI = info.Problems, info.UsesWASI
	rep.Imports, rep.Exports = externsJSON(info.Imports), externsJSON(info.Exports)
	if len(info.Problems) > 0 {
		return rep
	}
	rep.ABI = "v1"
	start := time.Now()
	p, err := plugin.FromBytes(ctx, rt, &config.Policy{Name: policyName(file), Config: cfg}, bin)
	rep.LoadMs = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	defer p.Close()
	d := p.Description()
	rep.Describe = &describeJSON{Name: d.Name, Version: d.Version, Events: d.Events}
	rep.Refused = false
	return rep
}

// refusal is why a plugin was refused, on one line.
func refusal(r *inspectReport) string {
	if len(r.Problems) > 0 {
		return strings.Join(r.Problems, "; ")
	}
	return r.Error
}

func printInspect(w io.Writer, r *inspectReport) {
	verdict := "ok"
	if r.Refused {
		verdict = "REFUSED: " + refusal(r)
	}
	fmt.Fprintf(w, "%s: %s\n", r.File, verdict)
	fmt.Fprintf(w, "file:     %d bytes, sha256 %s\n", r.Size, r.SHA256)
	switch {
	case r.ABI == "v1":
		fmt.Fprintln(w, "ABI:      v1 ok")
	case len(r.Problems) > 0:
		fmt.Fprintln(w, "ABI:      refused")
		for _, p := range r.Problems {
			fmt.Fprintln(w, "  -", p)
		}
	default:
		fmt.Fprintln(w, "ABI:      not a WebAssembly module")
	}
	if r.Error != "" && r.ABI == "v1" {
		fmt.Fprintln(w, "load:     refused:", r.Error)
	}
	if r.WASI {
		fmt.Fprintln(w, "WASI:     imported (sandboxed: no files, env or args; fake clocks; stdout/stderr to the log)")
	} else if r.Imports != nil {
		fmt.Fprintln(w, "WASI:     not imported (pure sandbox)")
	}
	table := func(title string, xs []externJSON) {
		fmt.Fprintf(w, "%s (%d):\n", title, len(xs))
		key := func(x externJSON) string {
			if x.Module == "" {
				return x.Name
			}
			return x.Module + "." + x.Name
		}
		width := 0
		for _, x := range xs {
			width = max(width, len(key(x)))
		}
		for _, x := range xs {
			fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-*s  %-6s %s", width, key(x), x.Kind, x.Signature), " "))
		}
	}
	if r.Imports != nil || r.Exports != nil {
		table("imports", r.Imports)
		table("exports", r.Exports)
	}
	if r.Describe != nil {
		fmt.Fprintf(w, "describe: name %q, version %q, events %s (loaded in %.1f ms)\n",
			r.Describe.Name, r.Describe.Version, strings.Join(r.Describe.Events, ", "), r.LoadMs)
	}
}
