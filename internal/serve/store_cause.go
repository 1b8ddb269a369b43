package serve

import (
	"errors"
	"log/slog"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
)

// logStoreCause logs why the shared store refused a request state: the
// caller's refusal says only that the store is unreachable (it names no
// store host, port or database), so the cause is kept here.
func logStoreCause(log *slog.Logger, call host.Call, err error) {
	var se *channel.StoreError
	if log == nil || !errors.As(err, &se) {
		return
	}
	log.Error("shared store: a request state was refused, the store did not answer; the caller is told to try again",
		"session", call.Session, "server", call.Server, "tool", call.Tool.Name, "redeem", se.Redeem, "err", se.Cause)
}
