package codex

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Codex runs a hook from a user's config.toml only once it is trusted:
// [hooks.state."<key>"] trusted_hash in a user layer must equal the hash of
// the hook's definition (codex-rs/hooks/src/engine/discovery.rs). The TUI
// writes it when the user trusts the hook in /hooks; nothing else does, so
// `codex exec` with a new hook silently runs without it.

// hookEntry is one hook as Codex's app server lists it (hooks/list).
type hookEntry struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	Matcher     string `json:"matcher"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
}

// codexHookHash is the trust hash Codex 0.171 computes for a command hook:
// the SHA-256 of the hook's normalized identity (event, matcher, the one
// handler with its timeout filled in, fields that are unset left out) as
// JSON with every object's keys sorted, no spaces, no HTML escaping.
func codexHookHash(event, matcher, command string, timeoutSec int) string {
	identity := map[string]any{
		"event_name": event,
		"matcher":    matcher,
		"hooks": []any{map[string]any{
			"type": "command", "command": command, "timeout": timeoutSec, "async": false,
		}},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // serde_json writes <, > and & as they are
	if err := enc.Encode(identity); err != nil {
		panic(err)
	}
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Hooks asks Codex's own app server (offline, over stdio) which hooks it
// found for the working folder, with their keys, hashes and trust.
func (a *agent) Hooks() []hookEntry {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.codex, "app-server")
	cmd.Dir = a.work
	cmd.Env = a.env()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		a.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		a.t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		a.t.Fatalf("starting codex app-server: %v", err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	for _, msg := range []string{
		`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"toolwarden-test","version":"1"}}}`,
		`{"method":"initialized"}`,
		fmt.Sprintf(`{"id":2,"method":"hooks/list","params":{"cwds":[%q]}}`, a.work),
	} {
		fmt.Fprintln(stdin, msg)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var resp struct {
			ID     int `json:"id"`
			Result struct {
				Data []struct {
					Hooks []hookEntry `json:"hooks"`
				} `json:"data"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &resp) != nil || resp.ID != 2 {
			continue
		}
		if resp.Error != nil {
			a.t.Fatalf("codex app-server hooks/list: %s", resp.Error)
		}
		var hooks []hookEntry
		for _, d := range resp.Result.Data {
			hooks = append(hooks, d.Hooks...)
		}
		return hooks
	}
	a.t.Fatalf("codex app-server did not answer hooks/list: %v\n%s", sc.Err(), stderr.String())
	return nil
}

// TrustHooks trusts every hook Codex lists, as /hooks in Codex's TUI does:
// it records each hook's current hash under its key in config.toml.
func (a *agent) TrustHooks(hooks []hookEntry) {
	a.t.Helper()
	var b strings.Builder
	for _, h := range hooks {
		fmt.Fprintf(&b, "\n[hooks.state.%q]\ntrusted_hash = %q\n", h.Key, h.CurrentHash)
	}
	f, err := os.OpenFile(a.ConfigPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		a.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		a.t.Fatal(err)
	}
}
