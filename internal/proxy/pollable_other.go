//go:build !unix

package proxy

import "io"

// pollableReader and pollableWriter are no-ops where pipes cannot be made
// non-blocking portably.
func pollableReader(r io.Reader) io.Reader { return r }

func pollableWriter(w io.Writer) io.Writer { return w }
