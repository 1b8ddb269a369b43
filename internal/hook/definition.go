package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/catalog"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// Definition is what a hook knows of an event's tool.
type Definition struct {
	Tool *host.Tool
	// Listed is true when the definition came from the catalog.
	Listed bool
	// Notes are said after the decision's reasons: where the definition
	// came from when that matters (an old entry), or why there is none.
	Notes []string
	// Warning is a catalog fault to report on stderr (a corrupt file).
	Warning error
}

// Target is the server an event's call goes to, as far as the catalog is
// concerned: the identity of the server the agent runs under the event's
// server name (see Places.Resolve), or, when that is not known, why.
type Target struct {
	Identity serverspec.Identity
	// Why says why Identity is unknown (the agent does not run the
	// server, its config cannot be read); the catalog is then not used.
	Why string
}

// Definition finds the event's tool in the catalog at dir, in the entry
// of the very server the agent runs (target), never in another server's
// entry of the same name. An agent's own tool, a server or tool the
// catalog does not list, an entry listed from another server, and a
// catalog file that cannot be used all give the tool by name alone: no
// annotations, so the spec's pessimistic defaults apply. The catalog can
// only add what the server claimed, never take a default away.
func (ev *Event) Definition(dir string, now time.Time, target Target) Definition {
	bare := Definition{Tool: NameOnly(ev.Tool)}
	if !ev.MCP {
		return bare
	}
	sync := "run `toolwarden tools sync` (or use the server through `toolwarden wrap`) so that its annotations count"
	switch {
	case dir == "":
		bare.Notes = append(bare.Notes, "no tool catalog (TOOLWARDEN_CATALOG=off, or no user cache dir): annotations unknown, pessimistic defaults apply")
		return bare
	case target.Identity.IsZero():
		why := target.Why
		if why == "" {
			why = "which server the agent runs under this name is not known"
		}
		bare.Notes = append(bare.Notes, fmt.Sprintf("the tool catalog is not used for server %q: %s; annotations unknown, pessimistic defaults apply", ev.Server, why))
		return bare
	}
	e, err := catalog.Read(dir, ev.Server, target.Identity)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		bare.Notes = append(bare.Notes, absentNote(dir, ev.Server, target.Identity, sync))
		return bare
	case err != nil:
		bare.Warning = err
		bare.Notes = append(bare.Notes, fmt.Sprintf("the tool catalog's entry for server %q cannot be read: annotations unknown, pessimistic defaults apply; %s", ev.Server, sync))
		return bare
	}
	raw, ok := e.Find(ev.Tool)
	if !ok {
		bare.Notes = append(bare.Notes, fmt.Sprintf("tool %q is not in the tool catalog's list for server %q (listed %s by %s): annotations unknown, pessimistic defaults apply; %s",
			ev.Tool, ev.Server, e.ListedAt.Format(time.RFC3339), e.Source, sync))
		return bare
	}
	t, err := host.ParseTool(raw)
	if err != nil {
		bare.Warning = fmt.Errorf("tool catalog, server %q: %w", ev.Server, err)
		bare.Notes = append(bare.Notes, fmt.Sprintf("the tool catalog's definition of %q cannot be read: annotations unknown, pessimistic defaults apply", ev.Tool))
		return bare
	}
	d := Definition{Tool: t, Listed: true}
	if age := e.Age(now); age > catalog.StaleAfter {
		d.Notes = append(d.Notes, fmt.Sprintf("definition from the tool catalog, listed %s ago (%s) by %s; run `toolwarden tools sync` to refresh it",
			age.Round(time.Hour), e.ListedAt.Format(time.RFC3339), e.Source))
	}
	return d
}

// absentNote says why the catalog has nothing for the server the agent
// runs: nothing of that name, only other servers of that name (an entry
// another config or project wrote; how the nearest differs), or an entry
// in the old format, which does not say which server it lists.
func absentNote(dir, server string, id serverspec.Identity, sync string) string {
	others, old := catalog.Others(dir, server, id)
	switch {
	case len(others) > 0:
		return fmt.Sprintf("the tool catalog lists other servers named %q than the one the agent runs (%s): one has %s, so their annotations are not believed; annotations unknown, pessimistic defaults apply; %s",
			server, id, id.Differs(others[0]), sync)
	case old:
		return fmt.Sprintf("the tool catalog's entry for server %q is in the old format, which does not say which server it lists, so it is not believed: annotations unknown, pessimistic defaults apply; run `toolwarden tools sync` to write it again", server)
	}
	return fmt.Sprintf("server %q is not in the tool catalog: annotations unknown, pessimistic defaults apply; %s", server, sync)
}

// NameOnly is a tool known by its name alone, as a hook without a
// definition sees it.
func NameOnly(name string) *host.Tool {
	raw, _ := json.Marshal(map[string]string{"name": name})
	t, err := host.ParseTool(raw)
	if err != nil {
		// Only an empty name fails, and events without a tool name are
		// refused by Parse.
		t = &host.Tool{Name: name}
	}
	return t
}

// askingModes are Claude Code's permission modes in which a hook's "ask"
// is put to the user in Claude Code's dialog (not skipped, not decided by
// a classifier).
var askingModes = map[string]bool{"default": true, "acceptEdits": true, "plan": true}

// HumanApproved reports whether this after-event shows that a human
// approved a call whose decision d was an ask: Claude Code runs a tool
// its hook asked about only once the user said yes in its dialog, in the
// modes that show that dialog. Gemini CLI's and Codex's hooks never ask
// (an ask is a deny there), and an event without a permission mode proves
// nothing.
func (ev *Event) HumanApproved(d *policy.Decision) bool {
	return ev.Agent == Claude && ev.Phase == After && d.Decision == policy.Ask && askingModes[ev.PermissionMode]
}
