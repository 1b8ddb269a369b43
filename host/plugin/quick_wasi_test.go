package plugin

import (
	"context"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

func wasiInstantiate(ctx context.Context, r wazero.Runtime) (api.Closer, error) {
	return wasi_snapshot_preview1.Instantiate(ctx, r)
}
