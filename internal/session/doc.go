// Package session is toolwarden's in-process session state: remembered
// approvals, tool-definition pins with drift detection, and labels (taint)
// that plugins read and write.
//
// A session is one agent conversation. Store hands out sessions by ID;
// every method is safe for concurrent use.
//
//	st := session.NewStore(nil) // or NewStore(p), p an opened approvals file
//	s := st.Get("conversation-1")
//	if s.Pin("fs", "write_file", hash) { /* drift: approvals for it are gone */ }
//	s.AddLabels("untrusted_content_seen")
//
// Persistent holds "always" approvals in a file, keyed by definition hash.
// Every check that could be allowed by the file stats it first, so a change
// made by any process (a revoke above all) holds from the next decision; a
// file that cannot be read grants nothing and reports why (Persistent.Err).
package session
