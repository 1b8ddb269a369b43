// Package inbox is the local rendezvous through which every toolwarden
// process on a machine (wrap, proxy, hook, an sdk host) hands its pending
// asks to other channels (the browser inbox, a webhook) and learns the
// first answer.
//
// The rendezvous is a directory of small JSON files in the user's own
// runtime directory (see Dir), never a socket or a network port:
//
//	<dir>/asks/<id>.json     one pending ask, written atomically by Post
//	<dir>/answers/<id>.json  its answer; the first Respond wins (hard link, exclusive)
//	<dir>/links/<hash>.json  one-time answer-link keys, stored as hashes (MintLink)
//	<dir>/inbox.json         the running inbox page's URL (Announce, Running)
//
// An asker publishes and waits:
//
//	dir, err := inbox.Dir()
//	p, err := inbox.Post(dir, inbox.Ask{Server: "fs", Tool: "write_file", Options: opts, Expires: deadline})
//	defer p.Close()
//	ans, err := p.Wait(ctx) // ans.Option is one of the offered option ids
//
// and a channel lists and answers:
//
//	asks, _ := inbox.List(dir)
//	err := inbox.Respond(dir, asks[0].ID, "allow_once", "inbox")
//
// The directory carries the same trust as the approvals file: it is 0700 and
// owned by the user, so only the user's own processes read or answer asks.
// An asker still applies an answer only if it offered that option.
package inbox
