module github.com/toolwarden/toolwarden

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/mark3labs/mcp-go v1.2.1 // indirect
	github.com/tetratelabs/wazero v1.12.0 // indirect
	golang.org/x/sys v0.44.0 // indirect
)
