package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

var corpus = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e-3`, `true`, `false`, `null`, ` {"a" : [1, 2, {"b":"c\"d"}] } `,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}`,
	`{"a":"\u00e9\n\\\/"}`, `"\ud800"`, "\"\xff\"", `{"A":1,"a":2}`,
	// invalid
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `01`, `1.`, `.5`, `1e`, `-`, `+1`, `tru`, `nul`, `"a`,
	`"\x"`, `"\u12"`, "\"\x01\"", `{} {}`, `[1 2]`, `{"a":1 "b":2}`, `1 2`, `"\`, `[`, `{"a":`,
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, c := range corpus {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%q) = %v, want %v", c, got, want)
		}
	}
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if Valid([]byte(deep)) {
		t.Error("nesting past the depth limit accepted")
	}
}

func TestMembersAndElements(t *testing.T) {
	t.Parallel()
	obj := ` { "id" : 7 , "m\u0065thod":"x", "params" : {"a":[1,{"b":"}"}]}, "n":null } `
	var keys, vals []string
	Members([]byte(obj), func(k, v []byte) bool {
		keys = append(keys, string(k))
		vals = append(vals, string(v))
		return true
	})
	if strings.Join(keys, "|") != `id|m\u0065thod|params|n` || strings.Join(vals, "|") != `7|"x"|{"a":[1,{"b":"}"}]}|null` {
		t.Fatalf("keys %q vals %q", keys, vals)
	}
	if !KeyIs([]byte(`m\u0065thod`), "method") || KeyIs([]byte(`METHOD`), "method") || KeyIs([]byte(`methods`), "method") {
		t.Fatal("KeyIs")
	}
	var els []string
	Elements([]byte(` [ 1 , "a,]" , {"x":[2]} ] `), func(v []byte) bool {
		els = append(els, string(v))
		return true
	})
	if strings.Join(els, "|") != `1|"a,]"|{"x":[2]}` {
		t.Fatalf("elements %q", els)
	}
	if Members([]byte(`[1]`), func(k, v []byte) bool { return true }) {
		t.Fatal("an array is not an object")
	}
}

func FuzzValid(f *testing.F) {
	for _, c := range corpus {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
		if !json.Valid(b) {
			return
		}
		// Members sees what encoding/json sees (last duplicate wins).
		var m map[string]json.RawMessage
		isObj := json.Unmarshal(b, &m) == nil && m != nil
		got := map[string]string{}
		if Members(b, func(k, v []byte) bool {
			var ks string
			if err := json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &ks); err != nil {
				t.Fatalf("key %q: %v", k, err)
			}
			got[ks] = string(v)
			return true
		}) != isObj {
			t.Fatalf("Members(%q): object = %v", b, !isObj)
		}
		for k, v := range m {
			if got[k] != string(v) {
				t.Fatalf("Members(%q)[%q] = %q, want %q", b, k, got[k], v)
			}
		}
		var s string
		sv, sok := String(bytes.TrimSpace(b))
		if err := json.Unmarshal(b, &s); (err == nil) != sok || sv != s {
			t.Fatalf("String(%q) = %q %v, want %q %v", b, sv, sok, s, err)
		}
	})
}

func TestReadMessage(t *testing.T) {
	cases := []struct {
		in                                 string
		id, method, params, result, rpcErr string
		ok                                 bool
	}{
		{in: `{"jsonrpc":"2.0","id":7,"method":"roots/list","params":{"a":1}}`, id: `7`, method: `"roots/list"`, params: `{"a":1}`, ok: true},
		{in: `{"id":null,"params":null,"error":null,"result":null}`, result: `null`, ok: true},
		{in: `{"ID":"x","Result":{},"error":{"code":1}}`, rpcErr: `{"code":1}`, ok: true},
		{in: `{"\u0069d":"x","result":{}}`, id: `"x"`, result: `{}`, ok: true},
		{in: `{"id":1,"id":"later"}`, id: `"later"`, ok: true},
		{in: ` {"method" : "m"} `, method: `"m"`, ok: true},
		{in: `["id",1]`},
		{in: `"id"`},
	}
	for _, c := range cases {
		m, ok := ReadMessage([]byte(c.in))
		if ok != c.ok || string(m.ID) != c.id || string(m.Method) != c.method || string(m.Params) != c.params || string(m.Result) != c.result || string(m.Error) != c.rpcErr {
			t.Errorf("ReadMessage(%s) = %q %q %q %q %q %v", c.in, m.ID, m.Method, m.Params, m.Result, m.Error, ok)
		}
		if (m.ID == nil) != (c.id == "") || (m.Params == nil) != (c.params == "") || (m.Error == nil) != (c.rpcErr == "") {
			t.Errorf("ReadMessage(%s): a null or absent member must be nil", c.in)
		}
	}
}

// ReadMessage reads what encoding/json reads into a map (keys matched
// exactly, a later duplicate winning), null counting as absent for id,
// params and error.
func FuzzReadMessageAgreesWithEncodingJSON(f *testing.F) {
	for _, c := range append(corpus,
		`{"jsonrpc":"2.0","id":"toolwarden-relay-3","result":{"roots":[]}}`,
		`{"Id":1,"ID":2,"METHOD":"x","Params":[1],"error":null,"result":{}}`,
		`{"id":null,"error":{"code":-1},"params":null}`) {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var want map[string]json.RawMessage
		isObj := json.Unmarshal(b, &want) == nil && bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("{"))
		got, ok := ReadMessage(b)
		if ok != isObj {
			t.Fatalf("ReadMessage(%q) ok = %v, encoding/json: object %v", b, ok, isObj)
		}
		if !ok {
			return
		}
		null := func(r json.RawMessage) string {
			if string(r) == "null" {
				return ""
			}
			return string(r)
		}
		if string(got.ID) != null(want["id"]) || string(got.Method) != string(want["method"]) || string(got.Params) != null(want["params"]) ||
			string(got.Result) != string(want["result"]) || string(got.Error) != null(want["error"]) {
			t.Fatalf("ReadMessage(%q) = %q %q %q %q %q, encoding/json %q %q %q %q %q", b,
				got.ID, got.Method, got.Params, got.Result, got.Error, want["id"], want["method"], want["params"], want["result"], want["error"])
		}
	})
}
