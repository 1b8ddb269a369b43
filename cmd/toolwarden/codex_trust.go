package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolwarden/toolwarden/internal/hook"
)

// codexHookReport says, for each toolwarden hook Codex is configured with
// (the user's ~/.codex config.toml and hooks.json, the project's .codex),
// whether Codex runs it. Codex skips a hook the user has not trusted
// without a word, codex exec included (internal/hook/codextrust.go), so a
// toolwarden hook that is not trusted decides nothing: every MCP call runs
// unchecked. Each hook Codex does not run gets a warning on warn with the
// exact step that trusts it, and wrap, which needs no hook trust, as the
// safer set-up; each it runs, a line on info. It returns how many hooks
// Codex does not run. Without a home folder there is nothing to read.
func codexHookReport(e *env, project string, info, warn io.Writer) int {
	home := e.getenv("HOME")
	if home == "" {
		return 0
	}
	places := hook.Places{Home: home, Project: project, Getenv: e.getenv}
	hooks, errs := places.CodexHooks()
	for _, err := range errs {
		fmt.Fprintf(warn, "warning: codex: cannot tell whether Codex trusts its hooks: %v\n", err)
	}
	skipped := 0
	for i := range hooks {
		h := &hooks[i]
		if !isToolwardenHook(h.Command) {
			continue
		}
		where := fmt.Sprintf("the toolwarden hook in %s ([[hooks.%s]] #%d, hook #%d: %q)", h.File, h.Event, h.Group+1, h.Handler+1, h.Command)
		if h.Trusted() {
			fmt.Fprintf(info, "codex: %s is trusted: Codex runs it (once the command changes, Codex skips it until it is trusted again)\n", where)
			continue
		}
		skipped++
		fmt.Fprintf(warn, "warning: codex: Codex does not run %s: %s. Codex skips such a hook without a word (codex exec too), so toolwarden decides nothing and every MCP call runs unchecked.\n", where, codexWhyNot(h))
		fmt.Fprintf(warn, "  %s\n", codexTrustStep(h, places.UserConfig()))
		fmt.Fprintf(warn, "  Safer for Codex: run its MCP servers behind `toolwarden wrap` (toolwarden init --write-agents), which decides every call without depending on hook trust.\n")
	}
	return skipped
}

// codexWhyNot says why Codex does not run h.
func codexWhyNot(h *hook.CodexHook) string {
	switch {
	case h.ProjectUntrusted != "":
		return h.ProjectUntrusted
	case h.Disabled:
		return "it is disabled (enabled = false)"
	case h.Modified():
		return "it changed since it was trusted (the trusted_hash Codex recorded is not the hook's as it is now)"
	}
	return "it is not trusted"
}

// codexTrustStep is the step that makes Codex run h.
func codexTrustStep(h *hook.CodexHook, userConfig string) string {
	if h.ProjectUntrusted != "" {
		return "To run it: trust the project in Codex (start `codex` there and answer its trust prompt), then trust the hook as Codex asks."
	}
	state := fmt.Sprintf("[hooks.state.%q]", h.Key)
	if h.Disabled {
		return fmt.Sprintf("To run it: enable it in Codex's /hooks, or delete `enabled = false` under %s in %s.", state, userConfig)
	}
	return fmt.Sprintf("To trust it: start `codex` in a terminal and choose \"Trust all and continue\" when it says hooks need review (or trust it in /hooks). That records in %s what you may also write there yourself:\n    %s\n    trusted_hash = %q", userConfig, state, h.Hash)
}

// isToolwardenHook reports whether a hook command runs toolwarden's hook:
// `toolwarden hook ...`, by any path.
func isToolwardenHook(command string) bool {
	fields := strings.Fields(command)
	for i, f := range fields {
		switch strings.TrimSuffix(filepath.Base(strings.Trim(f, `"'`)), ".exe") {
		case "toolwarden":
			if i+1 < len(fields) && fields[i+1] == "hook" {
				return true
			}
		}
	}
	return false
}

// workingDir is the folder a command runs in, "" when it cannot be known.
func workingDir() string {
	d, err := os.Getwd()
	if err != nil {
		return ""
	}
	return d
}
