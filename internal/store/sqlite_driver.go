package store

import (
	"errors"

	"modernc.org/sqlite"
)

// The SQLite driver: modernc.org/sqlite, chosen by the spike in
// docs/RATIONALE.md. Everything driver-specific is in this file.
const sqliteDriver = "sqlite"

// SQLite primary result codes the store acts on.
const (
	sqliteBUSY    = 5
	sqliteLOCKED  = 6
	sqliteCORRUPT = 11
	sqliteNOTADB  = 26
)

func sqliteCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code() & 0xff
	}
	return 0
}

// sqliteBusy: another connection holds the lock (a retry may win).
func sqliteBusy(err error) bool {
	c := sqliteCode(err)
	return c == sqliteBUSY || c == sqliteLOCKED
}

// sqliteCorrupt: the file is damaged or not a database.
func sqliteCorrupt(err error) bool {
	c := sqliteCode(err)
	return c == sqliteCORRUPT || c == sqliteNOTADB
}
