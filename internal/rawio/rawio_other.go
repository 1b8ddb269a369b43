//go:build !linux

package rawio

import (
	"io"
	"os"
)

func wrap(f *os.File) io.ReadWriteCloser { return f }
