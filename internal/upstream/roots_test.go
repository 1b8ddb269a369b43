package upstream

import (
	"reflect"
	"testing"
)

// The client's roots are the file URIs on this host, decoded; the rest
// name no folder here.
func TestRootPaths(t *testing.T) {
	got, ok := RootPaths([]byte(`{"roots":[{"uri":"file:///a/b%20c/"},{"uri":"FILE://localhost/d/../e"},{"uri":"file://other/x"},{"uri":"https://x/y"},{"uri":"file:rel"},{"uri":"%%"}]}`))
	if want := []string{"/a/b c", "/e"}; !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q %v, want %q", got, ok, want)
	}
	if _, ok := RootPaths([]byte(`[1]`)); ok {
		t.Error("a result that is not a roots list was read as one")
	}
}
