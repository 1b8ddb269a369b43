package host

import "github.com/toolwarden/toolwarden/internal/policy"

// ServerContext is what is known of a server's paths: its working
// directory, home, the client's roots it was told of and the directories
// on its command line. A Call carries it so that path rules judge the file
// the server will touch, not the argument's text ("secret/x" is
// "/srv/secret/x" to a server in /srv). Empty fields are unknown.
type ServerContext = policy.ServerContext
