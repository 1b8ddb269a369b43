package serve

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHealthzAnswersOKWithoutACredential(t *testing.T) {
	t.Parallel()
	f := startFront(t, echoHandler, frontSetup{principals: []string{"alice"}})
	resp, err := http.Get(f.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(b) != "ok" {
		t.Errorf("/healthz: %d %q, want 200 \"ok\"", resp.StatusCode, b)
	}
	// While /mcp, behind the same front, wants a token.
	if resp, _ := post(t, http.DefaultClient, f.url, "", callBody); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/mcp without a token: %d, want 401", resp.StatusCode)
	}
}

func TestReadyzNamesTheUpstreamsNotStartedAndNothingElse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		notReady []string
		draining bool
		want     int
		body     readiness
	}{
		{"every upstream started", nil, false, 200, readiness{Ready: true}},
		{"two upstreams down", []string{"fs", "everything"}, false, 503, readiness{NotReady: []string{"fs", "everything"}}},
		{"shutting down", nil, true, 503, readiness{Draining: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			readyz(func() []string { return c.notReady }, func() bool { return c.draining }, nil)(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if rec.Code != c.want {
				t.Errorf("status %d, want %d", rec.Code, c.want)
			}
			var got readiness
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(c.body)
			if string(gb) != string(wb) {
				t.Errorf("body %s, want %s", gb, wb)
			}
		})
	}
}

func TestProbesRefuseMethodsOtherThanGetAndHead(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	healthz(rec, httptest.NewRequest(http.MethodPost, "/healthz", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz: %d, want 405", rec.Code)
	}
}
