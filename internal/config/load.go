package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Layer is one config source: a name to show in diagnostics (and to resolve
// relative paths against) and its TOML text. The embedded default has the
// empty name.
type Layer struct {
	Name string
	Data []byte
}

// LoadError is every problem found while loading, errors first (then
// warnings), each group in layer order, then line and column.
type LoadError struct {
	Diagnostics []Diagnostic
}

// Error prints one diagnostic per line: "file:line:col: key.path: message",
// warnings prefixed with "warning: ".
func (e *LoadError) Error() string {
	var b strings.Builder
	for i, d := range e.Diagnostics {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.String())
	}
	return b.String()
}

// Errors returns just the errors (not the warnings).
func (e *LoadError) Errors() []Diagnostic {
	var out []Diagnostic
	for _, d := range e.Diagnostics {
		if d.Severity == SeverityError {
			out = append(out, d)
		}
	}
	return out
}

// String is Error with a "warning: " prefix for warnings: how the CLI prints
// a diagnostic.
func (d Diagnostic) String() string {
	if d.Severity == SeverityWarning {
		return "warning: " + d.Error()
	}
	return d.Error()
}

// Load reads TOML files as layers, later files overriding earlier ones (see
// LoadLayers). With no paths it returns Default(). A file that cannot be
// read is reported like any other error.
func Load(paths ...string) (*Config, error) {
	if len(paths) == 0 {
		return Default(), nil
	}
	layers := make([]Layer, len(paths))
	var diags []Diagnostic
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			diags = append(diags, Diagnostic{
				Pos:     Position{File: p},
				Message: fmt.Sprintf("cannot read config file: %v", err),
			})
		}
		layers[i] = Layer{Name: p, Data: data}
	}
	if len(diags) > 0 {
		return nil, &LoadError{Diagnostics: diags}
	}
	return LoadLayers(layers...)
}

// LoadBytes loads one layer from memory; name is the file shown in
// diagnostics and the folder relative paths resolve against.
func LoadBytes(name string, data []byte) (*Config, error) {
	return LoadLayers(Layer{Name: name, Data: data})
}

// LoadLayers merges layers as Codex does, then interprets the result.
//
// Each layer is parsed on its own; then the layers are deep-merged at the TOML
// level, before any key is interpreted: tables merge key by key, while
// scalars and arrays from a later layer replace earlier ones. So a project
// layer can set one key of a server the user layer defines, and the merged
// server is what gets validated.
//
// Only approval_policy, apps, mcp_servers and policies (and profile, for its
// approval_policy) belong to toolwarden; every other top-level key is Codex's
// and is ignored. Inside our tables an unknown key or a wrong type is an
// error. The error, if any, is a *LoadError holding every diagnostic.
func LoadLayers(layers ...Layer) (*Config, error) {
	l := &loader{}
	for i, ly := range layers {
		raw := map[string]any{}
		if _, err := toml.Decode(string(ly.Data), &raw); err != nil {
			if d, ok := jsonFileDiagnostic(ly.Name, ly.Data); ok {
				l.diags = append(l.diags, d) // one error, not ten TOML ones
				continue
			}
			l.diags = append(l.diags, syntaxDiagnostics(ly.Name, ly.Data, err)...)
			continue
		}
		l.layers = append(l.layers, &layer{
			name:  ly.Name,
			index: i,
			raw:   raw,
			keys:  locateKeys(ly.Name, ly.Data),
		})
	}
	if len(l.diags) > 0 {
		// Interpreting the other layers without the broken one would report
		// errors that are not there (a server missing the command the broken
		// layer gives it), so stop at syntax errors.
		return nil, &LoadError{Diagnostics: l.diags}
	}
	merged := map[string]any{}
	for _, ly := range l.layers {
		mergeTables(merged, ly.raw)
	}
	cfg := l.interpret(merged)
	for _, ly := range layers {
		cfg.Files = append(cfg.Files, ly.Name)
	}
	cfg.keys = l.resolvedKeys()
	cfg.Warnings = append(Validate(cfg), l.topLevelTypos(merged)...)
	sortDiagnostics(cfg.Warnings, layers)
	if l.hasErrors() {
		all := append(l.diags, cfg.Warnings...)
		sortDiagnostics(all, layers)
		return nil, &LoadError{Diagnostics: all}
	}
	return cfg, nil
}

// mergeTables deep-merges src into dst: tables merge, anything else
// replaces. Tables are copied on the way in so layers never share them.
func mergeTables(dst, src map[string]any) {
	for k, sv := range src {
		st, ok := sv.(map[string]any)
		if !ok {
			dst[k] = sv
			continue
		}
		dt, ok := dst[k].(map[string]any)
		if !ok {
			dt = map[string]any{}
			dst[k] = dt
		}
		mergeTables(dt, st)
	}
}

// sortDiagnostics orders errors before warnings, then by layer, line, column
// and text, so output is stable whatever order the checks ran in.
func sortDiagnostics(ds []Diagnostic, layers []Layer) {
	order := map[string]int{}
	for i, ly := range layers {
		if _, ok := order[ly.Name]; !ok {
			order[ly.Name] = i
		}
	}
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		switch {
		case a.Severity != b.Severity:
			return int(a.Severity) - int(b.Severity)
		case a.Pos.File != b.Pos.File:
			return order[a.Pos.File] - order[b.Pos.File]
		case a.Pos.Line != b.Pos.Line:
			return a.Pos.Line - b.Pos.Line
		case a.Pos.Col != b.Pos.Col:
			return a.Pos.Col - b.Pos.Col
		}
		return strings.Compare(a.Error(), b.Error())
	})
}

// layer is one parsed source.
type layer struct {
	name  string
	index int
	raw   map[string]any
	keys  keyIndex
}

// dir is the folder paths in this layer are relative to.
func (ly *layer) dir() string {
	if ly.name == "" {
		return "."
	}
	return filepath.Dir(ly.name)
}

// loader interprets the merged tree, collecting diagnostics as it goes so
// that one run reports every problem rather than the first.
type loader struct {
	layers []*layer
	diags  []Diagnostic
}

func (l *loader) hasErrors() bool { return len(l.diags) > 0 }

// lastLayer returns the last layer that writes path (the one whose value
// won), or nil.
func (l *loader) lastLayer(path string) *layer {
	for i := len(l.layers) - 1; i >= 0; i-- {
		if _, ok := l.layers[i].keys[path]; ok {
			return l.layers[i]
		}
	}
	return nil
}

// pos is where path was written by the layer whose value won; if no layer
// wrote it (a key that is missing), where its nearest parent was.
func (l *loader) pos(path string) Position {
	for p := path; ; p = parentPath(p) {
		if ly := l.lastLayer(p); ly != nil {
			return ly.keys[p]
		}
		if p == "" {
			break
		}
	}
	if len(l.layers) > 0 {
		return Position{File: l.layers[len(l.layers)-1].name}
	}
	return Position{}
}

// firstPos is where path was first defined across layers: an app, server or
// policy "lives" where it was introduced, even if later layers amend it.
func (l *loader) firstPos(path string) (Position, int) {
	for _, ly := range l.layers {
		if p, ok := ly.keys[path]; ok {
			return p, ly.index
		}
	}
	return l.pos(path), len(l.layers)
}

// resolvedKeys flattens the layers' indexes, later layers winning.
func (l *loader) resolvedKeys() map[string]Position {
	out := map[string]Position{}
	for _, ly := range l.layers {
		for k, p := range ly.keys {
			out[k] = p
		}
	}
	return out
}

// errorf reports an error about path, at path.
func (l *loader) errorf(path, format string, args ...any) {
	l.errorAt(path, path, format, args...)
}

// errorAt reports an error about path, at the position of key at (for an
// unknown key, path is its table and at the key itself).
func (l *loader) errorAt(at, path, format string, args ...any) {
	l.diags = append(l.diags, Diagnostic{
		Pos:     l.pos(at),
		Path:    path,
		Message: fmt.Sprintf(format, args...),
	})
}
