package plugin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// The complete WAT plugin in pdk/ABI.md section 9 compiles and behaves as
// the document says, so the document cannot go stale.
func TestABIDocumentPluginWorks(t *testing.T) {
	wat2wasm := requireTool(t, "wat2wasm")
	doc := string(readFile(t, "../../pdk/ABI.md"))
	sec := doc[strings.Index(doc, "## 9. A complete plugin in WAT"):]
	start := strings.Index(sec, "```wat\n") + len("```wat\n")
	end := start + strings.Index(sec[start:], "```")
	dir := t.TempDir()
	src := filepath.Join(dir, "doc.wat")
	if err := os.WriteFile(src, []byte(sec[start:end]), 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(wat2wasm, src, "-o", filepath.Join(dir, "doc.wasm")).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, msg)
	}
	rt := newRuntime(t, Options{})
	p, err := loadWasm(t, rt, config.Policy{Name: "doc"}, filepath.Join(dir, "doc.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Description(); d.Name != "always-ask" || d.Version != "1.0.0" || len(d.Events) != 1 || d.Events[0] != "check" {
		t.Errorf("describe: %+v", d)
	}
	v := p.Check(context.Background(), checkInput(`{}`))
	if v.Verdict != policy.Ask || v.Code != "always_ask" || v.Reason != "every call needs a human" || v.Remember || v.Err != nil {
		t.Errorf("check: %+v", v)
	}
	if o := p.Observe(context.Background(), &policy.ObserveInput{Tool: testTool}); o.Err != nil || o.Labels != nil {
		t.Errorf("observe (not in events): %+v", o)
	}
}
