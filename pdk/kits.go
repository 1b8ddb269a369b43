// Package kits is files, not an API: what `toolwarden plugin new` writes
// into a new plugin project, namely the project templates (templates/) and
// the sources of the kits a project carries with it, so that it builds
// outside this repository with no registry (the Go guest kit pdk/go, the
// Rust kit, the C header, the AssemblyScript kit). The kits themselves are
// documented in their folders.
//
// It sits in pdk/ because go:embed reaches only its own folder and those
// below it, and it is not named pdk so that one name means one thing: the
// Go guest kit (docs/RATIONALE.md, "One package named pdk").
package kits

import "embed"

// Files holds templates/ and the kits' sources, at their paths in this
// folder (go/plugin.go, rust/src/lib.rs, c/toolwarden.h, ...). go/*.go
// takes the Go kit's tests too; `plugin new` copies only the rest.
//
//go:embed templates go/*.go rust/Cargo.toml rust/src/*.rs c/toolwarden.h assemblyscript/assembly/index.ts assemblyscript/assembly/runtime.ts assemblyscript/assembly/regex.ts assemblyscript/assembly/shellwords.ts
var Files embed.FS
