// Package cli is what toolwarden's commands share besides their own code:
// flags held to one convention, exit codes, config loading, the version,
// and the parsers of wrap's and proxy's command lines, which the hook also
// runs on an agent's configured `toolwarden wrap` server so that both read
// one command line alike.
//
//	fs := cli.NewFlags(stdout, stderr, "wrap", summary, "wrap [flags] -- CMD", about)
//	if code, ok := fs.ParseArgs(args); !ok {
//		return code
//	}
package cli
