package identity

import (
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/mark3labs/mcp-go/server"
)

// MetadataHandler serves RFC 9728 protected-resource metadata: the
// resource identifier (the URL clients address, which is also the
// audience tokens must carry), the authorization servers that issue them,
// and that a token travels in the Authorization header only. It does not
// look at the request path, so any mux may mount it (see MetadataPaths).
func MetadataHandler(resource string, issuers []string) http.Handler {
	return server.NewProtectedResourceMetadataHandler(server.ProtectedResourceMetadataConfig{
		Resource:               resource,
		AuthorizationServers:   issuers,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "toolwarden serve",
	})
}

// MetadataPaths are the paths a client may fetch resource's metadata at:
// RFC 9728 section 3.1 puts the resource's path after the well-known
// prefix (/.well-known/oauth-protected-resource/mcp for .../mcp), and MCP
// clients fall back to the bare prefix.
func MetadataPaths(resource string) []string {
	paths := []string{MetadataPathPrefix}
	if u, err := url.Parse(resource); err == nil {
		if p := strings.Trim(u.Path, "/"); p != "" {
			paths = append(paths, path.Join(MetadataPathPrefix, p))
		}
	}
	return paths
}

// MetadataURL is the absolute URL of resource's metadata, the one a 401's
// challenge names.
func MetadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return ""
	}
	paths := MetadataPaths(resource)
	u.Path, u.RawQuery, u.Fragment = paths[len(paths)-1], "", ""
	return u.String()
}
