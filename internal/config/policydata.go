package config

// MaxPolicyData bounds a policy's data file ([policies.<name>] data): the
// host reads it once per plugin load and hands it to each instance once.
const MaxPolicyData = 4 << 20

// dataPath resolves a policy's data file against the folder of the layer
// that names it, as wasm paths are. Whether the file exists and is JSON is
// checked when the plugin loads (and by toolwarden validate), so that a
// config can be loaded where its data files are not.
func (l *loader) dataPath(p string, v any) (string, Position) {
	pos, _ := l.firstPos(p)
	s := l.str(p, v)
	if s == "" {
		if _, ok := v.(string); ok {
			l.errorf(p, `empty path: set the JSON file the plugin reads, e.g. data = "hosts.json"`)
		}
		return "", pos
	}
	return l.wasmPath(p, v), pos
}
