// Package testkit is what toolwarden's tests share instead of copying it:
// the repository's root (so a test names a file from the root, not with a
// "../../" that breaks when the test moves), the rule that a missing
// toolchain skips a test on a developer's machine and fails it in CI, and a
// buffer that goroutines may write while the test reads it.
//
// It imports nothing of toolwarden's, so any package's own tests may use it.
// Building a host from TOML is in the subpackage testhost, which imports
// the engine.
//
//	data := testkit.Path("pdk", "testdata", "conformance")
//	node := testkit.LookPath(t, "node")
//	var log testkit.Buffer
package testkit
