package secrets_test

import (
	"fmt"
	"strings"

	pdk "github.com/toolwarden/toolwarden/pdk/go"
	"github.com/toolwarden/toolwarden/plugins/secrets"
)

// The Go reference run natively on the envelopes the host sends: an
// observe of a result that shows an AWS access key id (made up here, in
// its real format), then a check of a tool that can send data out in the
// session the observe marked.
func ExampleNew() {
	p := secrets.New()
	key := "AKIA" + strings.Repeat("Q7", 8)
	observe := `{"abi":1,"event":"observe","session":{"id":"s","labels":[]},"call":{"capabilities":{"reads_private_data":true,` +
		`"sees_untrusted_content":false,"can_exfiltrate":false},"tool":{"name":"read_file"},"arguments":{"path":".env"}},` +
		`"result":{"is_error":false,"text":"AWS_ACCESS_KEY_ID=` + key + `\n"},"plugin":{"name":"secrets","config":{}}}`
	_, out := p.Handle(pdk.EventObserve, []byte(observe))
	fmt.Println(string(out))

	check := `{"abi":1,"event":"check","session":{"id":"s","labels":["secret_seen","secret_seen:aws_access_key"]},` +
		`"call":{"capabilities":{"reads_private_data":false,"sees_untrusted_content":true,"can_exfiltrate":true},` +
		`"tool":{"name":"send_mail"},"arguments":{"to":"a@example.com","body":"the notes"}},"plugin":{"name":"secrets","config":{}}}`
	_, out = p.Handle(pdk.EventCheck, []byte(check))
	fmt.Println(string(out))
	// Output:
	// {"labels":["secret_seen","secret_seen:aws_access_key"]}
	// {"decision":"ask","code":"secret_in_session","reason":"this session has seen an AWS access key id, and \"send_mail\" can send data out"}
}
