package plugin

import (
	"errors"
)

// wazero's CompiledModule lists imported and exported functions and
// memories, but not imported tables or globals. This reader walks the import
// and export sections of a module so that every import, of any kind, can be
// checked against the granted set and shown by `toolwarden plugin inspect`.

// Extern is one import or export: its kind and names.
type Extern struct {
	Kind   string // "func", "table", "memory", "global", "tag"
	Module string // imports only
	Name   string
	// Signature is set for functions, e.g. "(i32, i32) -> i32".
	Signature string `json:",omitempty"`
}

// Key is "module.name" for an import and "name" for an export.
func (e Extern) Key() string {
	if e.Module == "" {
		return e.Name
	}
	return e.Module + "." + e.Name
}

var externKinds = [...]string{"func", "table", "memory", "global", "tag"}

var errMalformed = errors.New("malformed wasm binary")

type wasmReader struct {
	b   []byte
	off int
}

func (r *wasmReader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errMalformed
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *wasmReader) uleb() (uint64, error) {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, errMalformed
}

func (r *wasmReader) name() (string, error) {
	n, err := r.uleb()
	if err != nil {
		return "", err
	}
	if n > uint64(len(r.b)-r.off) {
		return "", errMalformed
	}
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s, nil
}

func (r *wasmReader) limits() error {
	flags, err := r.byte()
	if err != nil {
		return err
	}
	if _, err := r.uleb(); err != nil {
		return err
	}
	if flags&1 != 0 {
		_, err = r.uleb()
	}
	return err
}

// readExterns lists the imports and exports of a wasm binary.
func readExterns(bin []byte) (imports, exports []Extern, err error) {
	if len(bin) < 8 || string(bin[:4]) != "\x00asm" {
		return nil, nil, errors.New("not a WebAssembly module (bad magic)")
	}
	r := &wasmReader{b: bin, off: 8}
	for r.off < len(r.b) {
		id, err := r.byte()
		if err != nil {
			return nil, nil, err
		}
		size, err := r.uleb()
		if err != nil || size > uint64(len(r.b)-r.off) {
			return nil, nil, errMalformed
		}
		end := r.off + int(size)
		sec := &wasmReader{b: r.b[:end], off: r.off}
		switch id {
		case 2:
			if imports, err = readImports(sec); err != nil {
				return nil, nil, err
			}
		case 7:
			if exports, err = readExports(sec); err != nil {
				return nil, nil, err
			}
		}
		r.off = end
	}
	return imports, exports, nil
}

func readImports(r *wasmReader) ([]Extern, error) {
	n, err := r.uleb()
	if err != nil {
		return nil, err
	}
	var out []Extern
	for i := uint64(0); i < n; i++ {
		mod, err := r.name()
		if err != nil {
			return nil, err
		}
		name, err := r.name()
		if err != nil {
			return nil, err
		}
		kind, err := r.byte()
		if err != nil {
			return nil, err
		}
		switch kind {
		case 0: // func: type index
			_, err = r.uleb()
		case 1: // table: reftype, limits
			if _, err = r.byte(); err == nil {
				err = r.limits()
			}
		case 2: // memory: limits
			err = r.limits()
		case 3: // global: valtype, mutability
			if _, err = r.byte(); err == nil {
				_, err = r.byte()
			}
		case 4: // tag: attribute, type index
			if _, err = r.byte(); err == nil {
				_, err = r.uleb()
			}
		default:
			return nil, errMalformed
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Extern{Kind: externKinds[kind], Module: mod, Name: name})
	}
	return out, nil
}

func readExports(r *wasmReader) ([]Extern, error) {
	n, err := r.uleb()
	if err != nil {
		return nil, err
	}
	var out []Extern
	for i := uint64(0); i < n; i++ {
		name, err := r.name()
		if err != nil {
			return nil, err
		}
		kind, err := r.byte()
		if err != nil {
			return nil, err
		}
		if int(kind) >= len(externKinds) {
			return nil, errMalformed
		}
		if _, err := r.uleb(); err != nil {
			return nil, err
		}
		out = append(out, Extern{Kind: externKinds[kind], Name: name})
	}
	return out, nil
}
