package plugin

import "testing"

// BenchmarkParseCheck is what reading a plugin's verdict costs the host
// when the instance's memo misses: the pull reader over a verdict with
// escapes, labels and flagged arguments.
func BenchmarkParseCheck(b *testing.B) {
	verdict := []byte(`{"decision":"ask","code":"trifecta.exfiltration","reason":"the session read private data (\"~/.ssh\") and can send it out","labels":["private","untrusted"],"arguments":["/url","/body"],"remember":false}`)
	for b.Loop() {
		if _, err := parseCheck(verdict); err != nil {
			b.Fatal(err)
		}
	}
}
