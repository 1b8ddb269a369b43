package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

type tsStep struct {
	Op        string         `json:"op"`
	Name      string         `json:"name,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Roots     []string       `json:"roots,omitempty"`    // setRoots
	Contains  string         `json:"contains,omitempty"` // waitFor
}

type tsResult struct {
	Results []struct {
		Op      string   `json:"op"`
		Name    string   `json:"name"`
		Tools   []string `json:"tools"`
		IsError bool     `json:"isError"`
		Text    string   `json:"text"`
		Thrown  string   `json:"thrown"`
	} `json:"results"`
	Asked []struct {
		Message         string         `json:"message"`
		RequestedSchema map[string]any `json:"requestedSchema"`
	} `json:"asked"`
}

// runTS runs sdk/testdata/tsclient.mjs: the official TypeScript SDK client
// against command, with scripted elicitation answers.
func runTS(t *testing.T, elicitation bool, answers []string, steps []tsStep, command string, args ...string) tsResult {
	t.Helper()
	return runTSScript(t, map[string]any{"elicitation": elicitation, "answers": answers}, steps, command, args...)
}

// runTSScript is runTS with the script's other fields given (see
// tsclient.mjs).
func runTSScript(t *testing.T, fields map[string]any, steps []tsStep, command string, args ...string) tsResult {
	t.Helper()
	res, _ := runTSWithStderr(t, fields, steps, command, args...)
	return res
}

// runTSWithStderr is runTSScript that also returns what the client's
// process wrote to stderr, the wrapped toolwarden's included.
func runTSWithStderr(t *testing.T, fields map[string]any, steps []tsStep, command string, args ...string) (tsResult, string) {
	t.Helper()
	// The spawned server gets only the env the script names (the SDK's
	// default set aside), so the test catalog is passed on by name.
	s := map[string]any{"command": command, "args": args, "steps": steps, "env": map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "TOOLWARDEN_CATALOG": os.Getenv("TOOLWARDEN_CATALOG")}}
	for k, v := range fields {
		s[k] = v
	}
	return runTSClient(t, nodeSDK(t), "", os.Environ(), s)
}

// runTSFrom runs sdk/testdata/tsclient.mjs as an agent would spawn a
// server: from the folder dir, with the environment environ.
func runTSFrom(t *testing.T, sdk, dir string, environ []string, script map[string]any) tsResult {
	t.Helper()
	res, _ := runTSClient(t, sdk, dir, environ, script)
	return res
}

// runTSClient runs tsclient.mjs with script, in dir (empty: this
// process's), with environ and the SDK at sdk, and returns its result and
// its stderr; the test fails when the client fails.
func runTSClient(t *testing.T, sdk, dir string, environ []string, script map[string]any) (tsResult, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := tsCommand(ctx, sdk, dir, environ, script)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("tsclient: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	var res tsResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("tsclient output: %v\n%s\nstderr: %s", err, out.String(), errb.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tsclient stderr:\n%s", errb.String())
		}
	})
	return res, errb.String()
}

// tsCommand is the node process that runs tsclient.mjs with script, in dir
// (empty: this process's), with environ and the SDK at sdk.
func tsCommand(ctx context.Context, sdk, dir string, environ []string, script map[string]any) *exec.Cmd {
	js, _ := json.Marshal(script)
	cmd := exec.CommandContext(ctx, "node", filepath.Join(root, "sdk", "testdata", "tsclient.mjs"), string(js))
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, environ...), "MCP_SDK="+sdk)
	return cmd
}
