package main

import "strings"

// stringList is a flag that may be given more than once, keeping every
// value in order: --config a.toml --config b.toml layers b over a.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}
