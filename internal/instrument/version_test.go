package instrument

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// versionOutput is the digest of Module's output for versionInputs, as
// Version "2" writes it. Hosts keep instrumented modules on disk under
// Version (internal/plugin/instrcache.go): output that changes under the same
// Version would run a stale instrumentation from the cache.
const versionOutput = "a8d0a337cba55e9fb48f93717278a215c6a4ab38a78d52ebff7c4246b5e94899"

var versionInputs = []string{
	testkit.Path("internal", "plugin", "testdata", "wat", "features.wasm"),
	testkit.Path("internal", "plugin", "testdata", "hostile", "loop.wasm"),
	testkit.Path("internal", "plugin", "testdata", "hostile", "calltree.wasm"),
	testkit.Path("internal", "plugin", "testdata", "hostile", "bulkloop.wasm"),
}

func TestVersionNamesTheOutput(t *testing.T) {
	h := sha256.New()
	for _, p := range versionInputs {
		out, err := Module(readFile(t, p))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		h.Write(out)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != versionOutput {
		t.Errorf("Module's output changed (digest %s, was %s): bump Version in version.go and set versionOutput to the new digest", got, versionOutput)
	}
}
