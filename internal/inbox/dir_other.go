//go:build !unix

package inbox

import "os"

// fixedTempBase is the system's temporary directory where there is no /tmp.
func fixedTempBase() string { return os.TempDir() }
