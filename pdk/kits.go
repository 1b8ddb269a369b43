// Package pdk holds what `toolwarden plugin new` writes into a new plugin
// project: the project templates (templates/) and the sources of the kits
// a project carries with it, so that it builds outside this repository
// with no registry (the Rust kit, the C header, the AssemblyScript kit).
// A Go project depends on the module github.com/toolwarden/toolwarden
// (pdk/go) instead. The kits themselves are documented in their folders.
package pdk

import "embed"

// Files holds templates/ and the kits' sources, at their paths in this
// folder (rust/src/lib.rs, c/toolwarden.h, ...).
//
//go:embed templates rust/Cargo.toml rust/src/*.rs c/toolwarden.h assemblyscript/assembly/index.ts assemblyscript/assembly/runtime.ts assemblyscript/assembly/regex.ts assemblyscript/assembly/shellwords.ts
var Files embed.FS
