//go:build unix

package inbox

// fixedTempBase is /tmp, not os.TempDir(): TMPDIR is one of the variables
// an agent may or may not pass to its servers (Codex passes it on macOS,
// the TypeScript SDK never does), so following it would split one user's
// asks between two places.
func fixedTempBase() string { return "/tmp" }
