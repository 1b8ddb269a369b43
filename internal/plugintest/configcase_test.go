package plugintest

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/plugin"
	"github.com/toolwarden/toolwarden/plugins"
)

// A case may give its own config (a table of configs in one file), expect
// it refused at load, and check the verdict's whole reason, flagged
// arguments and proposed scopes; each of these fails when the plugin
// answers otherwise.
func TestCasesWithTheirOwnConfigAndVerdictDetails(t *testing.T) {
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{NoDiskCache: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	bin, _ := plugins.Builtin("argguard")
	f, err := Parse("t.json", []byte(`{"plugin":{"name":"argguard","config":{}},"cases":[
	 {"name":"ask","config":{"rules":[{"arg":"p","ask_glob":"/**"}]},"event":"check",
	  "call":{"tool":{"name":"t"},"arguments":{"p":"/a/b"}},
	  "expect":{"decision":"ask","reason":"argument \"p\" = \"/a/b\" matches ask_glob \"/**\"","arguments":["p"],"scopes":[{"arg":"/p","glob":"/a/**"}]}},
	 {"name":"wrong reason","config":{"rules":[{"arg":"p","ask_glob":"/**"}]},"event":"check",
	  "call":{"tool":{"name":"t"},"arguments":{"p":"/a/b"}},"expect":{"reason":"argument \"p\""}},
	 {"name":"wrong arguments","config":{"rules":[{"arg":"p","ask_glob":"/**"}]},"event":"check",
	  "call":{"tool":{"name":"t"},"arguments":{"p":"/a/b"}},"expect":{"arguments":["q"]}},
	 {"name":"wrong scopes","config":{"rules":[{"arg":"p","ask_glob":"/**"}]},"event":"check",
	  "call":{"tool":{"name":"t"},"arguments":{"p":"/a/b"}},"expect":{"scopes":[{"arg":"/p","glob":"/**"}]}},
	 {"name":"the file's config","event":"check","call":{"arguments":{"p":"/a/b"}},"expect":{"decision":"abstain"}},
	 {"name":"refused","config":{"rules":[{"arg":"p"}]},"load_error":"missing a matcher"},
	 {"name":"refused otherwise","config":{"rules":[{"arg":"p"}]},"load_error":"unknown key"},
	 {"name":"not refused","config":{"rules":[]},"load_error":"missing"},
	 {"name":"refused unexpectedly","config":{"rules":7},"event":"check","expect":{"decision":"abstain"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Run(ctx, rt, bin, "argguard", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ask": "", "wrong reason": "reason: want", "wrong arguments": "arguments: want",
		"wrong scopes": "scopes: want", "the file's config": "", "refused": "", "refused otherwise": "want a load error containing",
		"not refused": "it loaded", "refused unexpectedly": "refused at load with this config"}
	if len(res) != len(want) {
		t.Fatalf("%d results, want %d", len(res), len(want))
	}
	for _, r := range res {
		got := strings.Join(r.Problems, "; ")
		if w := want[r.Name]; (w == "") != (got == "") || !strings.Contains(got, w) {
			t.Errorf("%s: problems %q, want %q", r.Name, got, w)
		}
	}
}

// A case that expects a load error runs no event, so it gives nothing
// else, and it needs a config of its own.
func TestALoadErrorCaseGivesOnlyItsConfig(t *testing.T) {
	for _, c := range []string{
		`{"cases":[{"name":"x","load_error":"y"}]}`,
		`{"cases":[{"name":"x","config":{},"load_error":"y","event":"check"}]}`,
		`{"cases":[{"name":"x","config":{},"load_error":"y","expect":{"decision":"deny"}}]}`,
	} {
		if _, err := Parse("t.json", []byte(c)); err == nil {
			t.Errorf("%s: accepted", c)
		}
	}
}
