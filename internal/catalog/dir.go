package catalog

import (
	"errors"
	"path/filepath"
	"runtime"
)

// EnvDir names the environment variable that moves the catalog (or, set
// to "off", turns writing it off).
const EnvDir = "TOOLWARDEN_CATALOG"

// DefaultDir is the catalog folder: $TOOLWARDEN_CATALOG, else
// <user cache dir>/toolwarden/catalog, the cache dir found as
// os.UserCacheDir finds it but through getenv, so that a caller's
// environment (a test's, a hook's) decides. "" with a nil error means the
// catalog is off.
func DefaultDir(getenv func(string) string) (string, error) {
	if d := getenv(EnvDir); d != "" {
		if d == "off" {
			return "", nil
		}
		return d, nil
	}
	base, err := userCacheDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "toolwarden", "catalog"), nil
}

func userCacheDir(getenv func(string) string) (string, error) {
	switch runtime.GOOS {
	case "windows":
		if d := getenv("LocalAppData"); d != "" {
			return d, nil
		}
		return "", errors.New("%LocalAppData% is not set (set " + EnvDir + ")")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, "Library", "Caches"), nil
		}
	case "plan9":
		if h := getenv("home"); h != "" {
			return filepath.Join(h, "lib", "cache"), nil
		}
	default:
		if d := getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
			return d, nil
		}
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, ".cache"), nil
		}
	}
	return "", errors.New("neither $XDG_CACHE_HOME nor $HOME is set, so there is no user cache dir for the tool catalog (set " + EnvDir + ")")
}
