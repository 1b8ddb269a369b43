package plugin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// Every kit's session state accessors, through a real guest built with the
// kit's real toolchain: a budget of 2 (testdata/kitbudget) lets exactly 2
// of 5 concurrent checks in a session through, and observe's entry lands
// in the session.
func TestEveryKitsStateAccessorsHoldABudgetOfTwo(t *testing.T) {
	for _, kit := range append([]kitBuild{
		{"go", func(t *testing.T, out string) {
			if err := os.WriteFile(out, buildGuest(t, "./testdata/gobudget"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}, kitBuilds("kitbudget", "budget")...) {
		t.Run(kit.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "budget.wasm")
			kit.build(t, out)
			rt := newRuntime(t, Options{})
			p, err := FromBytes(context.Background(), rt, &config.Policy{Name: "budget"}, readFile(t, out))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if !p.Stateful() {
				t.Fatal(`the kit did not say "state": true in describe`)
			}
			store := session.NewStore(nil)
			for iter := 0; iter < 10; iter++ {
				s := store.Get(string(rune('a' + iter)))
				var allowed, asked atomic.Int32
				var wg sync.WaitGroup
				for range 5 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						v := p.Check(context.Background(), stateCheck(s, "fetch"))
						switch {
						case v.Err != nil:
							t.Errorf("check failed: %v", v.Err)
						case v.Verdict == policy.Allow:
							allowed.Add(1)
						case v.Verdict == policy.Ask:
							asked.Add(1)
						}
					}()
				}
				wg.Wait()
				if allowed.Load() != 2 || asked.Load() != 3 {
					t.Fatalf("iteration %d: %d allowed, %d asked; want 2 and 3", iter, allowed.Load(), asked.Load())
				}
			}
			s := store.Get("observed")
			res := p.Observe(context.Background(), &policy.ObserveInput{Session: "observed", Server: "fs", App: "fs", Tool: &hints.Tool{Name: "read_file"}, State: s})
			if res.Err != nil || s.Plugin("budget").State().Entries["last_tool"] != "read_file" {
				t.Fatalf("observe's entry did not land: %+v, state %+v", res, s.Plugin("budget").State())
			}
		})
	}
}

func run(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd.Args[0], err, msg)
	}
}
