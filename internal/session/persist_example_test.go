package session_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/internal/session"
)

// Two handles on one approvals file, as two processes would have: a revoke
// through one is seen by the other's next check, and a file that cannot be
// read grants nothing.
func ExamplePersistent_Revoke() {
	dir, _ := os.MkdirTemp("", "approvals-example-")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "approvals.json")
	hash := strings.Repeat("0a", 32)

	agent, _ := session.OpenPersistent(file) // in the proxy
	cli, _ := session.OpenPersistent(file)   // in `toolwarden approvals`
	_ = cli.Add(session.ApprovalKey{App: "fs", Server: "fs", Tool: "write_file", Hash: hash}, time.Now())
	fmt.Println("granted:", agent.Remembered("fs", "fs", "", "write_file", hash))

	n, _ := cli.Revoke(func(g session.Grant) bool { return g.Tool == "write_file" })
	fmt.Println("revoked", n, "- granted:", agent.Remembered("fs", "fs", "", "write_file", hash))

	_ = cli.Add(session.ApprovalKey{App: "fs", Server: "fs", Tool: "write_file", Hash: hash}, time.Now())
	_ = os.WriteFile(file, []byte("{oops"), 0o600)
	agent.SetLogger(slog.New(slog.DiscardHandler)) // the proxy logs the problem once per change
	fmt.Println("broken file - granted:", agent.Remembered("fs", "fs", "", "write_file", hash), "- problem:", agent.Err() != nil)
	// Output:
	// granted: true
	// revoked 1 - granted: false
	// broken file - granted: false - problem: true
}
