//go:build !linux

package main

import "errors"

// handOver is Linux-only; elsewhere toolwarden runs as a child.
func handOver(string, []string, []byte) error { return errors.New("not supported") }
