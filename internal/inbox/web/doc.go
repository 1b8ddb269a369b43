// Package web serves the approval inbox: a local page where a person sees
// every pending ask of every toolwarden process of theirs (through the
// rendezvous directory of package inbox) and answers it, revokes standing
// ("always") approvals, and shows the recent calls of the audit log, one
// row per call with how it ended (calls.go), revokes included.
//
// The page is for the machine's own user only. It is served on a loopback
// address, every request must name that address in its Host header (no DNS
// rebinding), every API call must carry the per-run token (a cookie the
// page gets from the URL toolwarden inbox prints), and every request that
// changes something must come from the page's own origin. Its scripts,
// styles and chart are the project's own files, embedded in the binary;
// nothing is fetched from elsewhere (Content-Security-Policy default-src
// 'self').
//
//	srv, err := web.New(dir, web.Defaults().WithApprovals(p).WithAudit("audit.jsonl"))
//	ln, _ := net.Listen("tcp", "127.0.0.1:0")
//	h := srv.Handler(ln.Addr().String())
//	fmt.Println(srv.URL(ln.Addr().String())) // http://127.0.0.1:PORT/?t=TOKEN
//	http.Serve(ln, h)
package web
