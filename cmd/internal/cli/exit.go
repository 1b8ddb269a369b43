package cli

// Exit codes shared by every command of both programs.
const (
	ExitOK    = 0
	ExitError = 1 // bad input, bad config, internal failure
	ExitUsage = 2
	ExitAsk   = 10
	ExitDeny  = 20
)
