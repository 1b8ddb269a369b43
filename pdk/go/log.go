package pdk

// Level is a log level of the log import.
type Level uint32

const (
	LevelDebug Level = iota
	LevelInfo
	LevelWarn
	LevelError
)
