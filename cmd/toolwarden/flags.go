package main

import "github.com/toolwarden/toolwarden/cmd/internal/cli"

// stringList is a flag that may be given more than once (cli.StringList).
type stringList = cli.StringList
