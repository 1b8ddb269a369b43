package upstream

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
)

// RootPaths reads a client's answer to roots/list ({"roots":[{"uri":
// "file:///..."}]}) as the directories it names: file URIs on this host,
// percent-decoded and cleaned. Other URIs name no directory here and are
// left out. ok is false when the answer is not a roots list.
func RootPaths(result json.RawMessage) (paths []string, ok bool) {
	var r struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	if json.Unmarshal(result, &r) != nil {
		return nil, false
	}
	for _, root := range r.Roots {
		u, err := url.Parse(root.URI)
		if err != nil || !strings.EqualFold(u.Scheme, "file") || (u.Host != "" && !strings.EqualFold(u.Host, "localhost")) {
			continue
		}
		if filepath.IsAbs(u.Path) {
			paths = append(paths, filepath.Clean(u.Path))
		}
	}
	return paths, true
}
