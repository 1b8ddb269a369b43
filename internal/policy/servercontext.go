package policy

// ServerContext is what is known of the server a call goes to that decides
// which file a path argument names: a server resolves relative paths, "."
// and ".." against its working directory (some, like server-filesystem,
// against the directories it serves), and "~" against its home. Plugins
// see it as the envelope's server_context (pdk/ABI.md 4.2) and argguard
// resolves path arguments with it. Every path is absolute; an empty one is
// unknown, and a plugin must then fail closed. The JSON form is the
// envelope's (and what `toolwarden check` reads from a call file).
//
// This is the one type for it (host.ServerContext is this type); the
// front ends derive it from the spec of the server they start or judge
// with serverspec.Spec.ServerContext, which says how each field is found.
type ServerContext struct {
	// Cwd is the server's working directory.
	Cwd string `json:"cwd,omitempty"`
	// Home is the server's home directory (its HOME).
	Home string `json:"home,omitempty"`
	// Roots are the client's roots the server was told of, as paths.
	Roots []string `json:"roots,omitempty"`
	// ArgDirs are directories named on the server's command line (a
	// server may resolve relative paths against them).
	ArgDirs []string `json:"arg_dirs,omitempty"`
}
