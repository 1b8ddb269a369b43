// Package architecture holds the tests that keep docs/architecture.md true:
// every package of the module is in its Packages table and nothing else is,
// each with a declared layer; no package imports one from a higher layer;
// and the public surface (packages outside internal/, examples/ and cmd/)
// stays within its bounds. After moving or adding a package, run
//
//	go test ./internal/architecture/
//
// and add, drop or re-layer the rows it names.
package architecture
