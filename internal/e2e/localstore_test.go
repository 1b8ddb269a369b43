package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/store/pgtest"
	"github.com/toolwarden/toolwarden/plugins"
)

// The local front ends on a shared store (--store): what one process
// grants, revokes or learns about a session, another process sees,
// though they share no approvals file and no hook state directory.

// ownConfigDir runs a command with a user config directory of its own (so
// an approvals file of its own), as a second machine would have: only the
// store can carry an approval from one to the other.
func ownConfigDir(t *testing.T, bin string, args ...string) (string, []string) {
	t.Helper()
	env, err := exec.LookPath("env")
	if err != nil {
		t.Fatal(err)
	}
	return env, append([]string{"XDG_CONFIG_HOME=" + t.TempDir(), bin}, args...)
}

func TestTwoWrapsOnOneStoreShareAnAlwaysApprovalAndSeeARevokeOnTheirNextCall(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	for engine, storeURL := range storeEngines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			twoWrapsShareAndRevoke(t, fsBin, storeURL(t))
		})
	}
}

func twoWrapsShareAndRevoke(t *testing.T, fsBin, storeURL string) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	askA, askB := answers("always", "deny"), answers("deny")
	start := func(ask *scripted) *goClient {
		bin, args := ownConfigDir(t, twBin, "wrap", "--app", "fs", "--store", storeURL, "--", fsBin, dir)
		return startGo(t, false, ask, bin, args...)
	}
	a, b := start(askA), start(askB)
	write := func(c *goClient, name string) (string, bool) {
		return c.call(t, "write_file", map[string]any{"path": filepath.Join(dir, name), "content": name})
	}

	if out, isErr := write(a, "granted.txt"); isErr || askA.count() != 1 {
		t.Fatalf("A answered always: %q (error %v, asked %d)", out, isErr, askA.count())
	}
	if out, isErr := write(b, "shared.txt"); isErr || askB.count() != 0 || !fileExists(filepath.Join(dir, "shared.txt")) {
		t.Fatalf("B's call after A's always: %q (error %v, B asked %d times, want 0)", out, isErr, askB.count())
	}

	mustContain(t, runTW(t, "approvals", "revoke", "--store", storeURL, "--server", "fs", "--tool", "write_file"), "revoked 1")

	out, isErr := write(b, "revoked.txt")
	if askB.count() != 1 {
		t.Fatalf("B's next call after the revoke was not asked about (asked %d times, want 1): %q", askB.count(), out)
	}
	if !isErr || fileExists(filepath.Join(dir, "revoked.txt")) {
		t.Fatalf("B denied after the revoke, yet the call ran: %q (error %v)", out, isErr)
	}
}

// A taint learnt by one hook process is in the store for the next one,
// though each runs with a state directory of its own: private data read
// (one process), untrusted content seen (another), and the exfiltrating
// call (a third) is denied by the trifecta plugin.
func TestHooksOnOneStoreCarryASessionsTaintToTheNextHookProcess(t *testing.T) {
	t.Parallel()
	if _, ok := plugins.Builtin("trifecta"); !ok {
		t.Skip("the first-party trifecta plugin is not built into this tree")
	}
	dir := t.TempDir()
	storeURL := "sqlite:" + filepath.Join(dir, "store.db")
	tools := writeFile(t, "tools.json", `{"fs":[
{"name":"read_notes","description":"read notes","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}},
{"name":"fetch_page","description":"fetch a page","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}},
{"name":"send_message","description":"send a message","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}]}`)
	cfg := writeFile(t, "trifecta.toml", `
[apps.fs.tools.read_notes]
hints = { reads_private_data = true }
[apps.fs.tools.fetch_page]
hints = { sees_untrusted_content = true }
[apps.fs.tools.send_message]
hints = { can_exfiltrate = true }

[policies.trifecta]
builtin = "trifecta"
config = { mode = "deny" }
`)
	hookRun := func(withStore bool, event string) (string, int) {
		args := []string{"hook", "--agent", "claude", "--config", cfg, "--tools", tools,
			"--state-dir", t.TempDir(), "--audit", "off"}
		if withStore {
			args = append(args, "--store", storeURL)
		}
		bin, argv := ownConfigDir(t, twBin, args...)
		cmd := exec.Command(bin, argv...)
		cmd.Env = append(os.Environ(), "TOOLWARDEN_CATALOG=off")
		cmd.Stdin = strings.NewReader(event)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String() + errb.String(), exitStatus(t, err)
	}
	leg := func(withStore bool, session, tool string) {
		t.Helper()
		if out, code := hookRun(withStore, hookEvent("claude", session, tool, "/tmp", map[string]any{})); code != 0 || !strings.Contains(out, "allow") {
			t.Fatalf("%s: %q (exit %d), want an allow", tool, out, code)
		}
		if out, code := hookRun(withStore, afterEvent("claude", session, tool, map[string]any{}, false)); code != 0 {
			t.Fatalf("after %s: %q (exit %d)", tool, out, code)
		}
	}
	exfil := func(withStore bool, session string) (string, int) {
		return hookRun(withStore, hookEvent("claude", session, "send_message", "/tmp", map[string]any{"text": "the notes"}))
	}

	t.Run("with the store", func(t *testing.T) {
		leg(true, "s1", "read_notes")
		leg(true, "s1", "fetch_page")
		out, code := exfil(true, "s1")
		if !strings.Contains(out, "lethal_trifecta") || strings.Contains(out, `"permissionDecision":"allow"`) {
			t.Fatalf("the exfiltrating call after both legs in other hook processes: %q (exit %d), want the trifecta's deny", out, code)
		}
		if out, _ := exfil(true, "another-session"); strings.Contains(out, "lethal_trifecta") {
			t.Fatalf("another session inherited s1's taint: %q", out)
		}
	})
	t.Run("without it, state directories apart share nothing (the control)", func(t *testing.T) {
		leg(false, "s2", "read_notes")
		leg(false, "s2", "fetch_page")
		if out, _ := exfil(false, "s2"); strings.Contains(out, "lethal_trifecta") {
			t.Fatalf("without a store the taint crossed state directories: %q", out)
		}
	})
}

// A store that is named but cannot be opened stops the command at start
// with an error that names it (password hidden) and says what to check:
// it never runs on without the approvals and taints it was told to share.
func TestALocalFormWhoseStoreCannotOpenFailsAtStartAndSaysWhy(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	notADir := writeFile(t, "file", "not a directory")
	stores := map[string]string{
		"an SQLite path under a file":         "sqlite:" + filepath.Join(notADir, "store.db"),
		"a Postgres server that is not there": "postgres://tw:s3cret-pass@127.0.0.1:1/tw?sslmode=disable&connect_timeout=2",
	}
	for what, url := range stores {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			for _, form := range []struct {
				name string
				args []string
				want int
			}{
				{"wrap", []string{"wrap", "--app", "fs", "--store", url, "--", fsBin, t.TempDir()}, 1},
				{"proxy", []string{"proxy", "--config", writeFile(t, "p.toml", fmt.Sprintf("[mcp_servers.fs]\ncommand = %q\nargs = [%q]\n", fsBin, t.TempDir())), "--store", url}, 1},
				{"hook", []string{"hook", "--agent", "claude", "--state-dir", t.TempDir(), "--store", url}, exitHookBlock},
			} {
				cmd := exec.Command(twBin, form.args...)
				cmd.Stdin = strings.NewReader(hookEvent("claude", "s", "read_text_file", "/tmp", map[string]any{"path": "/tmp/x"}))
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				err := cmd.Run()
				ee, ok := err.(*exec.ExitError)
				if !ok || ee.ExitCode() != form.want {
					t.Fatalf("%s with an unusable store: %v (want exit %d)\nstdout: %s\nstderr: %s", form.name, err, form.want, out.String(), errb.String())
				}
				msg := errb.String()
				mustContain(t, msg, "the shared store did not open")
				if strings.Contains(msg, "s3cret-pass") {
					t.Fatalf("%s printed the store's password: %s", form.name, msg)
				}
				if strings.Contains(out.String(), "allow") {
					t.Fatalf("%s allowed a call without its store: %s", form.name, out.String())
				}
			}
		})
	}
}

// An approvals file named beside a store would count for nothing (the
// decisions read the store): the command refuses the pair at start.
func TestALocalFormRefusesAnApprovalsFileBesideAStore(t *testing.T) {
	t.Parallel()
	storeURL := "sqlite:" + filepath.Join(t.TempDir(), "store.db")
	approvals := filepath.Join(t.TempDir(), "approvals.json")
	for _, form := range []struct {
		args []string
		want int
	}{
		{[]string{"wrap", "--app", "fs", "--approvals", approvals, "--store", storeURL, "--", "true"}, 1},
		{[]string{"hook", "--agent", "claude", "--state-dir", t.TempDir(), "--approvals", approvals, "--store", storeURL}, exitHookBlock},
	} {
		cmd := exec.Command(twBin, form.args...)
		cmd.Stdin = strings.NewReader(hookEvent("claude", "s", "read_text_file", "/tmp", map[string]any{"path": "/tmp/x"}))
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != form.want {
			t.Fatalf("%s with --approvals and --store: %v (want exit %d)\n%s", form.args[0], err, form.want, errb.String())
		}
		mustContain(t, errb.String(), "--approvals and a shared store")
	}
}

// exitHookBlock is the exit status every supported agent reads as "block".
const exitHookBlock = 2

// The escalation a shared store must not open: a developer's `toolwarden
// wrap --store X` answers "always" (a caller-less session), and a caller
// of `toolwarden serve --store X` calls the same tool at the same
// definition. The wrap's grant is local: serve's caller is still asked
// (and denied when they refuse), while another local process on the
// store is not asked.
func TestAnAlwaysGivenThroughWrapIsNotHonouredForAServeCallerOnTheSameStore(t *testing.T) {
	t.Parallel()
	for engine, storeURL := range storeEngines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			wrapAlwaysIsNotServes(t, storeURL(t))
		})
	}
}

func wrapAlwaysIsNotServes(t *testing.T, storeURL string) {
	f := newStoreFleet(t, storeURL)
	serve := f.start(t)
	wrap := func(ask *scripted) *goClient {
		bin, args := ownConfigDir(t, twBin, "wrap", "--app", "gate", "--config", f.cfg, "--store", storeURL, "--", testServer, "-state", t.TempDir())
		return startGo(t, false, ask, bin, args...)
	}
	askLocal := answers("always")
	if out, isErr := wrap(askLocal).call(t, "echo", map[string]any{"message": "local"}); isErr || askLocal.count() != 1 {
		t.Fatalf("the wrap's always: %q (error %v, asked %d)", out, isErr, askLocal.count())
	}
	out, code := twRun(t, nil, "approvals", "list", "--json", "--store", storeURL)
	var gs []session.SharedGrant
	if err := json.Unmarshal([]byte(out), &gs); code != 0 || err != nil || len(gs) != 1 || gs[0].Scope != (session.GrantScope{Kind: session.ScopeLocal}) {
		t.Errorf("the wrap's grant is not one local grant: exit %d %v %s", code, err, out)
	}

	askServe := answers("deny")
	out, isErr := storeClient(t, serve, legacyEra, "alice-token", askServe).call(t, "gate__echo", map[string]any{"message": "serve"})
	if askServe.count() != 1 || !isErr || strings.Contains(out, "echo: serve") {
		t.Fatalf("serve's caller after the wrap's always: %q (error %v, asked %d, want asked once and denied)", out, isErr, askServe.count())
	}

	askOther := answers("deny")
	if out, isErr := wrap(askOther).call(t, "echo", map[string]any{"message": "other"}); isErr || askOther.count() != 0 {
		t.Fatalf("another local wrap on the store: %q (error %v, asked %d, want 0)", out, isErr, askOther.count())
	}
}

// storeEngines gives, for each engine a local form may share a store on,
// a fresh store's URL: a SQLite file of the test's own, or the suite's
// pgtest Postgres.
var storeEngines = map[string]func(t *testing.T) string{
	"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "store.db") },
	"postgres": func(t *testing.T) string { return pgtest.Shared(t).URL },
}
