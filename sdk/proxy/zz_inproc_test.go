package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/sdk/proxy"
	"github.com/toolwarden/toolwarden/sdk/upstream"
)

func BenchmarkInProcess(b *testing.B) {
	ctx := context.Background()
	h, err := host.New(ctx, config.Default(), host.Defaults().WithApprovalsFile(filepath.Join(b.TempDir(), "a.json")))
	if err != nil {
		b.Fatal(err)
	}
	cinR, cinW, _ := os.Pipe()
	coutR, coutW, _ := os.Pipe()
	p := proxy.New(h, []upstream.Spec{{Name: "bench", Command: "/tmp/ts"}}, proxy.Defaults().WithWaitForUpstreams(true))
	go p.Run(ctx, cinR, coutW)
	br := bufio.NewReader(coutR)
	rt := func(line string) string {
		fmt.Fprintln(cinW, line)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if strings.Contains(l, `"id":`) {
				return l
			}
		}
	}
	rt(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`)
	fmt.Fprintln(cinW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}`
	for i := range 200 {
		rt(fmt.Sprintf(call, i+1))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := rt(fmt.Sprintf(call, i+1000)); !strings.Contains(r, "echo: hello") {
			b.Fatal(r)
		}
	}
	b.StopTimer()
	cinW.Close()
}
