package store

import "errors"

// Why Open refused a database. Each is wrapped in an error that names the
// store (password redacted), what is wrong and what to do; Open changed
// nothing in the database before refusing it.
var (
	// ErrNewerSchema: the database was migrated by a newer toolwarden.
	ErrNewerSchema = errors.New("the database's schema is newer than this toolwarden knows")
	// ErrCorrupt: the file is not a SQLite database, or its pages are damaged.
	ErrCorrupt = errors.New("the database file is damaged or not a SQLite database")
	// ErrLocked: another process holds the database's write lock.
	ErrLocked = errors.New("the database is locked by another process")
)
