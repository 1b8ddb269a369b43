//go:build !unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
)

// replaceProcess runs path as a child with this process's stdio and exits
// with its status: there is no exec in place here. An interrupt reaches
// the child through the console; this process only waits for it.
func replaceProcess(path string, argv []string) error {
	signal.Ignore(os.Interrupt)
	cmd := exec.Command(path, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() >= 0 {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		return err
	}
	os.Exit(0)
	return nil
}
