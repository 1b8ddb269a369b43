package gemini

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// token is written into the file the model reads, so its arrival in a tool
// result proves the server's answer reached the model.
const token = "TOKEN-7f3a9c-gemini-reads-through-toolwarden"

// protectedReason is argguard's reason for denying writes under protected/.
const protectedReason = "protected files are read-only"

// server is the filesystem server's name in Gemini CLI's settings. Its '_'
// makes Gemini CLI's name for a tool ambiguous: mcp_work_fs_write_file
// reads as tool fs_write_file of server work too. The hook must decide on
// the server and tool Gemini CLI names in the event's mcp_context.
const server = "work_fs"

// fn is Gemini CLI's name for the server's tool: mcp_<server>_<tool>.
func fn(tool string) string { return "mcp_" + server + "_" + tool }

// The script both runs follow: read the token file, write under
// protected/, create a directory (asked), then answer.
func script(w *world, extra ...turn) []turn {
	s := []turn{
		{Call: fn("read_text_file"), Args: map[string]any{"path": filepath.Join(w.dir, "notes.txt")}},
		{Call: fn("write_file"), Args: map[string]any{"path": filepath.Join(w.dir, "protected", "owned.txt"), "content": "overwritten"}},
		{Call: fn("create_directory"), Args: map[string]any{"path": filepath.Join(w.dir, "asked")}},
	}
	s = append(s, extra...)
	return append(s, turn{Text: "done"})
}

// world is one run's fresh machine: a served folder, a HOME with nothing
// but what the test writes, a toolwarden config, and where toolwarden
// keeps its catalog, sessions and audit.
type world struct {
	gemini, fsServer string
	dir              string // served by the filesystem server, and Gemini CLI's working directory
	home             string
	config           string // toolwarden's config
	catalog          string
	state            string
	audit            string
	netlog           string // connections the network guard refused
	guard            string // the network guard, preloaded into every node process
}

func newWorld(t *testing.T) *world {
	gemini, fsServer := tools(t)
	tmp := t.TempDir()
	// The filesystem server compares resolved paths: give it (and the
	// rules) the resolved folder, or a symlinked TMPDIR denies everything.
	tmp, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{
		gemini: gemini, fsServer: fsServer,
		dir:     filepath.Join(tmp, "work"),
		home:    filepath.Join(tmp, "home"),
		config:  filepath.Join(tmp, "toolwarden.toml"),
		catalog: filepath.Join(tmp, "catalog"),
		state:   filepath.Join(tmp, "sessions"),
		audit:   filepath.Join(tmp, "audit.jsonl"),
		netlog:  filepath.Join(tmp, "netguard.log"),
		guard:   filepath.Join(tmp, "netguard.cjs"),
	}
	for _, d := range []string{w.dir, filepath.Join(w.dir, "protected"), filepath.Join(w.home, ".gemini")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(w.dir, "notes.txt"), token+"\n")
	write(t, filepath.Join(w.dir, "old.txt"), "to be moved\n")
	write(t, w.guard, netGuard)
	// move_file hidden; writes under protected/ denied by argguard;
	// create_directory asked on every call.
	write(t, w.config, fmt.Sprintf(`
[apps.%[3]s]
trust = "full"

[apps.%[3]s.tools.move_file]
enabled = false

[apps.%[3]s.tools.create_directory]
approval_mode = "prompt"

[policies.argguard]
builtin = "argguard"
[policies.argguard.config]
rules = [{ tool = "write_file", arg = "path", deny_glob = %[1]q, reason = %[2]q }]
`, filepath.Join(w.dir, "protected", "**"), protectedReason, server))
	return w
}

// addConfig appends TOML to the toolwarden config.
func (w *world) addConfig(t *testing.T, toml string) {
	t.Helper()
	f, err := os.OpenFile(w.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(toml); err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// netGuard is preloaded (NODE_OPTIONS=--require) into Gemini CLI and every
// node process it starts. It refuses any connection that does not go to
// loopback and appends the host to $TOOLWARDEN_NETGUARD_LOG, so a test
// can assert that the agent ran offline, whatever its settings forgot.
const netGuard = `'use strict';
const fs = require('fs');
const net = require('net');
const dns = require('dns');
const logFile = process.env.TOOLWARDEN_NETGUARD_LOG;
const loopback = (h) => h === 'localhost' || h === '::1' || /^127\./.test(h) || h === '::ffff:127.0.0.1';
function refuse(h) {
  try { fs.appendFileSync(logFile, process.pid + ' ' + h + '\n'); } catch (e) {}
  const err = new Error('toolwarden test network guard: ' + h + ' is not loopback');
  err.code = 'ECONNREFUSED';
  return err;
}
const lookup = dns.lookup;
dns.lookup = function (host, ...rest) {
  if (typeof host === 'string' && !loopback(host)) {
    const cb = rest[rest.length - 1];
    const err = refuse(host);
    if (typeof cb === 'function') process.nextTick(() => cb(err));
    return {};
  }
  return lookup.call(this, host, ...rest);
};
const plookup = dns.promises.lookup;
dns.promises.lookup = async function (host, ...rest) {
  if (typeof host === 'string' && !loopback(host)) throw refuse(host);
  return plookup.call(this, host, ...rest);
};
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  let o = args[0];
  if (Array.isArray(o)) o = o[0];
  let host = null;
  if (o && typeof o === 'object') {
    if (!o.path) host = o.host || 'localhost';
  } else if (typeof o === 'number' || (typeof o === 'string' && /^\d+$/.test(o))) {
    host = typeof args[1] === 'string' ? args[1] : 'localhost';
  }
  if (host !== null && !loopback(host)) {
    const err = refuse(host);
    process.nextTick(() => this.destroy(err));
    return this;
  }
  return connect.apply(this, args);
};
`

// settings is the agent's ~/.gemini/settings.json: offline (API key auth
// against the scripted model, no usage statistics, telemetry, update checks
// or IDE), folder trust off so the test's folder counts as trusted, and
// the given MCP servers and hooks.
func (w *world) settings(t *testing.T, servers, hooks map[string]any) {
	t.Helper()
	s := map[string]any{
		"security": map[string]any{
			"auth":        map[string]any{"selectedType": "gemini-api-key"},
			"folderTrust": map[string]any{"enabled": false},
		},
		"privacy":    map[string]any{"usageStatisticsEnabled": false},
		"telemetry":  map[string]any{"enabled": false},
		"general":    map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"ide":        map[string]any{"enabled": false},
		"mcpServers": servers,
	}
	if hooks != nil {
		s["hooks"] = hooks
		s["hooksConfig"] = map[string]any{"enabled": true}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.home, ".gemini", "settings.json"), string(b))
}

// env is the environment of the agent and of what the test runs beside it:
// nothing inherited but PATH (with toolwarden first) and node's own, so no
// real credential, proxy or config of the machine leaks in.
func (w *world) env(m *model) []string {
	env := []string{
		"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + w.home,
		"USERPROFILE=" + w.home,
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(w.home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(w.home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(w.home, ".local", "state"),
		"TMPDIR=" + filepath.Dir(w.home),
		"TOOLWARDEN_CATALOG=" + w.catalog,
		"TOOLWARDEN_NETGUARD_LOG=" + w.netlog,
		"NODE_OPTIONS=--require " + w.guard,
		"NO_COLOR=1",
		"TERM=dumb",
		// Gemini CLI relaunches itself to raise its heap limit; one process
		// is enough here and keeps the run's output in one place.
		"GEMINI_CLI_NO_RELAUNCH=true",
	}
	if m != nil {
		env = append(env, "GOOGLE_GEMINI_BASE_URL="+m.URL(), "GEMINI_API_KEY=dummy")
	}
	return env
}

// run runs `gemini -p prompt` in the served folder, bounded, and returns
// its stdout and stderr.
func (w *world) run(t *testing.T, m *model, prompt string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Gemini CLI's default model ("auto") is kept: its router first asks
	// a classifier (a side request the scripted model answers), as a
	// user's Gemini CLI does.
	// --approval-mode yolo: toolwarden is the gate under test. In the
	// default mode a non-interactive Gemini CLI removes from the model's
	// list the tools its own policy asks about by name, matching MCP tools
	// by their short names too, so the filesystem server's write_file
	// would never be offered.
	cmd := exec.CommandContext(ctx, w.gemini, "-p", prompt, "--output-format", "text", "--approval-mode", "yolo")
	cmd.Dir = w.dir
	cmd.Env = w.env(m)
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	t.Logf("gemini -p ran %s", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			chat, side, stray := m.requests()
			t.Logf("gemini stdout:\n%s\ngemini stderr:\n%s", out.String(), errb.String())
			t.Logf("model: %d conversation requests, %d side requests, stray: %q", len(chat), len(side), stray)
		}
	})
	if ctx.Err() != nil {
		t.Fatalf("gemini -p did not finish within the deadline\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	if err != nil {
		t.Fatalf("gemini -p: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	w.offline(t, m)
	if strings.Contains(errb.String(), "Retry attempts exhausted") {
		// Gemini CLI retried an answer it could not use (a side request's
		// JSON, say) until it gave up: the script no longer fits the agent.
		t.Errorf("Gemini CLI gave up on an answer of the scripted model:\n%s", errb.String())
	}
	return out.String(), errb.String()
}

// offline asserts that nothing tried to leave the machine and that the
// scripted model knew every request it got.
func (w *world) offline(t *testing.T, m *model) {
	t.Helper()
	if b, err := os.ReadFile(w.netlog); err == nil && len(b) > 0 {
		t.Errorf("a process tried to reach beyond 127.0.0.1 (refused; pid host):\n%s", b)
	}
	if _, _, stray := m.requests(); len(stray) > 0 {
		t.Errorf("Gemini CLI sent requests the script cannot answer: %q", stray)
	}
}

// auditRecord is one line of the hook's --audit file.
type auditRecord struct {
	Event    string   `json:"event"`
	Session  string   `json:"session"`
	Labels   []string `json:"labels"`
	Decision struct {
		Decision string `json:"decision"`
		Server   string `json:"server"`
		Tool     string `json:"tool"`
		Reasons  []struct {
			Source  string `json:"source"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"reasons"`
	} `json:"decision"`
}

func (w *world) auditRecords(t *testing.T) []auditRecord {
	t.Helper()
	f, err := os.Open(w.audit)
	if err != nil {
		t.Fatalf("the hook wrote no audit: %v", err)
	}
	defer f.Close()
	var recs []auditRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		var r auditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line is not JSON: %v\n%s", err, sc.Text())
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func mustContain(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(strings.ToLower(got), strings.ToLower(s)) {
			t.Errorf("%s does not say %q:\n%s", what, s, got)
		}
	}
}

// saysNoOneWasAsked reports whether a text tells the model that the
// approval prompt reached no one, rather than that someone refused.
func saysNoOneWasAsked(text string) bool {
	text = strings.ToLower(text)
	for _, s := range []string{"no one saw", "nobody saw", "no one was asked", "cannot show approval prompts", "cannot ask for"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// claimsARefusal reports whether a text says a person refused the call.
func claimsARefusal(text string) bool {
	text = strings.ToLower(text)
	for _, s := range []string{"user denied", "denied by the user", "user rejected", "rejected by the user", "user declined", "declined by the user"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// The offline assertion is only as good as the guard: a node process
// started as the agent is must have a connection to a public address and
// a name lookup refused and recorded, and loopback let through.
func TestNetworkGuardRefusesAndRecordsAllButLoopback(t *testing.T) {
	w := newWorld(t)
	m := newModel(t)
	probe := `
const net = require('net');
const tryConnect = (host) => new Promise((resolve) => {
  const s = net.connect({ host, port: 443 }, () => { s.destroy(); resolve(host + ' connected'); });
  s.on('error', (e) => resolve(host + ' ' + e.code));
});
(async () => {
  const out = [];
  out.push(await tryConnect('93.184.215.14'));
  out.push(await tryConnect('play.googleapis.com'));
  try { await fetch(process.env.GOOGLE_GEMINI_BASE_URL + '/probe'); out.push('loopback reached'); } catch (e) { out.push('loopback ' + e.message); }
  console.log(out.join('\n'));
})();
`
	cmd := exec.Command("node", "-e", probe)
	cmd.Env = w.env(m)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	for _, want := range []string{"93.184.215.14 ECONNREFUSED", "play.googleapis.com ECONNREFUSED", "loopback reached"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("want %q from the probe:\n%s", want, out)
		}
	}
	logged, _ := os.ReadFile(w.netlog)
	for _, host := range []string{"93.184.215.14", "play.googleapis.com"} {
		if !strings.Contains(string(logged), host) {
			t.Errorf("the guard did not record %s:\n%s", host, logged)
		}
	}
	if strings.Contains(string(logged), "127.0.0.1") {
		t.Errorf("the guard recorded loopback:\n%s", logged)
	}
}
