package main

import "github.com/toolwarden/toolwarden/cmd/internal/cli"

// defaultApprovalsPath is where "always" approvals live unless --approvals
// says otherwise (cli.ApprovalsPath).
func defaultApprovalsPath() (string, error) { return cli.ApprovalsPath() }

func displayApprovalsPath() string { return cli.DisplayApprovalsPath() }
