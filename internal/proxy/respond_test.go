package proxy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A result is written as one line whatever its size, whether it is
// written in place (large, on one line) or copied into a line (small, or
// spread over lines, which must be compacted), and a 2026-07-28 client
// gets resultType either way.
func TestAResultIsWrittenAsOneLineLargeOrSmall(t *testing.T) {
	t.Parallel()
	large := strings.Repeat("x", 2*maxPooledLine)
	for _, tc := range []struct {
		name   string
		raw    string
		modern bool
	}{
		{"small", `{"content":[{"type":"text","text":"hi"}]}`, false},
		{"small, modern", `{"content":[{"type":"text","text":"hi"}]}`, true},
		{"large", `{"content":[{"type":"text","text":"` + large + `"}]}`, false},
		{"large, modern", `{"content":[{"type":"text","text":"` + large + `"}]}`, true},
		{"large over lines, modern", "{\n  \"content\": [{\"type\":\"text\",\n \"text\":\"" + large + "\"}]\n}", true},
		{"empty, modern", `{}`, true},
	} {
		var out bytes.Buffer
		p := &Proxy{}
		p.out = newOutput(&out, p)
		p.respond(&callRequest{ID: json.RawMessage(`7`), Modern: tc.modern}, outcome{raw: json.RawMessage(tc.raw)})
		line := out.Bytes()
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Errorf("%s: not one line (%d line breaks)", tc.name, bytes.Count(line, []byte("\n")))
			continue
		}
		var m struct {
			ID     json.RawMessage
			Result map[string]any
		}
		if err := json.Unmarshal(line, &m); err != nil || string(m.ID) != "7" {
			t.Errorf("%s: %v, id %s: %.200s", tc.name, err, m.ID, line)
			continue
		}
		var want map[string]any
		_ = json.Unmarshal([]byte(tc.raw), &want)
		if tc.modern {
			want["resultType"] = "complete"
		}
		gotJSON, _ := json.Marshal(m.Result)
		wantJSON, _ := json.Marshal(want)
		if !bytes.Equal(gotJSON, wantJSON) {
			t.Errorf("%s: result differs:\n got %.200s\nwant %.200s", tc.name, gotJSON, wantJSON)
		}
	}
}
