package store_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/interleave"
	"github.com/toolwarden/toolwarden/internal/store"
	"github.com/toolwarden/toolwarden/internal/store/pgtest"
	"github.com/toolwarden/toolwarden/internal/testkit"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

const (
	benchWrite = `{"name":"write_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true,"openWorldHint":false}}`
	benchRead  = `{"name":"read_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`
	benchToml  = "[mcp_servers.fs]\ncommand = \"fs-mcp\"\n"
)

// BenchmarkDecide is what a shared store costs a decision, in one run:
//
//   - a call an "always" approval lets through, the approval kept in the
//     approvals file (the baseline: an in-memory map behind a stat), in
//     the session (in memory), or in a store (SQLite, Postgres): with a
//     store the host first loads the session's state when it moved (one
//     read) and Covers confirms the grants' revision (one more);
//   - a plain allow (a read-only tool), with no store and with each: the
//     session's read alone, since a call that changes nothing saves
//     nothing and an allow never consults grants.
//
// Ratios: <store>/file and plain-<store>/plain. Postgres runs when it is
// installed (pgtest), over TCP on this machine.
func BenchmarkDecide(b *testing.B) {
	ctx := context.Background()
	write, read := parse(b, benchWrite), parse(b, benchRead)
	args := json.RawMessage(`{"path":"/repo/notes.txt","content":"hello"}`)
	var names []string
	var cases []func() bool
	add := func(name string, h *host.Host, sess string, t *host.Tool, want host.Verdict) {
		c := host.Call{Session: sess, Server: "fs", Tool: t, Arguments: args}
		if d := h.Check(ctx, c); d.Decision != want {
			b.Fatalf("%s: %s %+v", name, d.Decision, d.Reasons)
		}
		names = append(names, name)
		cases = append(cases, func() bool { return h.Check(ctx, c).Decision == want })
	}
	approve := func(h *host.Host, sess string, scope host.Scope) {
		d := h.Check(ctx, host.Call{Session: sess, Server: "fs", Tool: write, Arguments: args})
		if err := h.Approve(sess, &d, scope); err != nil {
			b.Fatal(err)
		}
	}

	file := testhost.New(b, benchToml, host.Defaults().WithoutTrace().WithApprovalsFile(filepath.Join(b.TempDir(), "approvals.json")))
	approve(file, "grant", host.Always)
	add("file", file, "s", write, host.Allow)
	mem := testhost.New(b, benchToml, host.Defaults().WithoutTrace())
	approve(mem, "mem", host.ForSession)
	add("session", mem, "mem", write, host.Allow)
	add("plain", file, "p", read, host.Allow)

	urls := map[string]string{"sqlite": "sqlite:" + filepath.Join(b.TempDir(), "store.db")}
	if _, err := pgtest.BinDir(); err == nil || testkit.RequireToolchains() {
		urls["postgres"] = pgtest.Shared(b).URL
	}
	for _, engine := range []string{"sqlite", "postgres"} {
		url, ok := urls[engine]
		if !ok {
			continue
		}
		st, err := store.Open(ctx, url, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		h := testhost.New(b, benchToml, host.Defaults().WithoutTrace().WithStore(st))
		approve(h, "grant", host.Always)
		add(engine, h, "s", write, host.Allow)
		add("plain-"+engine, h, "p", read, host.Allow)
	}

	b.ReportAllocs()
	total := interleave.Blocks(b, names, cases)
	at := func(name string) float64 {
		for i, n := range names {
			if n == name {
				return float64(total[i])
			}
		}
		return 0
	}
	for _, engine := range []string{"sqlite", "postgres"} {
		if _, ok := urls[engine]; ok {
			b.ReportMetric(at(engine)/at("file"), engine+"/file")
			b.ReportMetric(at("plain-"+engine)/at("plain"), "plain-"+engine+"/plain")
		}
	}
	b.ReportMetric(at("session")/at("file"), "session/file")
}

func parse(b *testing.B, raw string) *host.Tool {
	t, err := host.ParseTool([]byte(raw))
	if err != nil {
		b.Fatal(err)
	}
	return t
}
