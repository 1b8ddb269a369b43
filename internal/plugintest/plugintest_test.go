package plugintest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/toolwarden/toolwarden/internal/plugin"
)

func TestInputTextExpandAndLoadError(t *testing.T) {
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{CacheDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	bin, err := os.ReadFile("../../pdk/testdata/conformance/example.wasm")
	if err != nil {
		t.Fatal(err)
	}
	var f File
	err = json.Unmarshal([]byte(`{"plugin":{"name":"example","config":{"blocked_tool":"rm"}},"cases":[
		{"name":"text input","event":"check","input_text":"{\"call\":{\"tool\":{\"name\":\"rm\"},\"arguments\":{\"x\":\"BIG\"}},\"plugin\":{\"config\":{\"blocked_tool\":\"rm\"}}}",
		 "expand":{"BIG":{"repeat":"ab","times":50000}},"expect":{"decision":"deny"}},
		{"name":"not JSON","event":"check","input_text":"not json","expect":{"error":"error code 2"}}]}`), &f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Run(ctx, rt, bin, "example", nil)
	if err != nil || len(res) != 2 {
		t.Fatalf("%v %+v", err, res)
	}
	for _, r := range res {
		if len(r.Problems) > 0 {
			t.Errorf("%s: %v", r.Name, r.Problems)
		}
	}
	// The WAT example loads with any config, so a load_error file fails.
	lf := File{Plugin: f.Plugin, LoadError: "error code 4"}
	res, err = lf.Run(ctx, rt, bin, "example", nil)
	if err != nil || len(res) != 1 || len(res[0].Problems) != 1 {
		t.Errorf("load_error on a plugin that loads: %v %+v", err, res)
	}
	// The hostile nomarker module is refused at load.
	bad, _ := os.ReadFile("../plugin/testdata/hostile/nomarker.wasm")
	lf.LoadError = "missing ABI marker"
	res, err = lf.Run(ctx, rt, bad, "x", nil)
	if err != nil || len(res) != 1 || len(res[0].Problems) != 0 {
		t.Errorf("load_error on a refused plugin: %v %+v", err, res)
	}
}
