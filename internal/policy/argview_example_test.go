package policy_test

import (
	"fmt"
	"strings"

	"github.com/toolwarden/toolwarden/internal/policy"
)

// A write whose long content comes before its path: the path, flagged by a
// plugin, comes first; the content is cut by itself (a cut string has no
// closing quote); the header gives the size, the digest and what was cut.
func ExampleViewArguments() {
	args := `{"content":"` + strings.Repeat("x", 300) + `","path":"/etc/cron.d/job","options":{"mode":"a\nb"}}`
	v := policy.ViewArguments([]byte(args), []string{"path"})
	fmt.Println(strings.Replace(v.Text(), strings.Repeat("x", 256), "x…x", 1))
	fmt.Printf("incomplete: %q\n", v.Incomplete)
	// Output:
	// Arguments (365 bytes, sha256 22a661f1bbe0f173; 44 bytes cut from 1 value; * = flagged by a policy, shown first):
	//   * path = "/etc/cron.d/job"
	//     content = "x…x… [44 more bytes not shown]
	//     options/mode = "a\nb"
	// incomplete: ""
}
