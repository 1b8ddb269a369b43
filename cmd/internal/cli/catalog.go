package cli

import (
	"flag"

	"github.com/toolwarden/toolwarden/internal/catalog"
)

// CatalogFlag registers --catalog and returns a function giving its
// value, or the default folder.
func CatalogFlag(fs *flag.FlagSet, getenv func(string) string) func() (string, error) {
	dir := fs.String("catalog", "", "the tool catalog folder (default: $TOOLWARDEN_CATALOG, else <user cache dir>/toolwarden/catalog)")
	return func() (string, error) {
		if *dir != "" {
			return *dir, nil
		}
		return catalog.DefaultDir(getenv)
	}
}
