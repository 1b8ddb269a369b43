package web

import (
	"net/http"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/session"
)

// approvals lists the standing ("always") approvals, or says why the
// file cannot be used.
func (st *site) approvals(w http.ResponseWriter, r *http.Request) {
	p := st.opts.approvals
	if p == nil {
		writeJSON(w, http.StatusOK, map[string]any{"file": "", "grants": []session.Grant{}})
		return
	}
	grants, err := p.List()
	if grants == nil {
		grants = []session.Grant{}
	}
	out := map[string]any{"file": p.Path(), "grants": grants}
	if err != nil {
		out["error"] = err.Error() + " (it grants nothing meanwhile; toolwarden approvals reset backs it up and starts an empty one)"
	}
	writeJSON(w, http.StatusOK, out)
}

// revoke removes one standing approval, named by its whole key. Every
// running host stats the file before each decision, so the next call is
// asked about again.
func (st *site) revoke(w http.ResponseWriter, r *http.Request) {
	p := st.opts.approvals
	if p == nil {
		writeError(w, http.StatusNotFound, "this inbox shows no approvals file")
		return
	}
	var k session.ApprovalKey
	if err := readJSON(r, &k); err != nil {
		writeError(w, http.StatusBadRequest, "want the approval's key {app, server, connector, tool, definition_hash}: %v", err)
		return
	}
	if k.Server == "" || k.Tool == "" || len(k.Hash) != 64 {
		writeError(w, http.StatusBadRequest, "the approval's server, tool and full definition_hash are required")
		return
	}
	n, err := p.Revoke(func(g session.Grant) bool { return g.ApprovalKey == k })
	if err != nil {
		writeError(w, http.StatusConflict, "%v", err)
		return
	}
	if n == 0 {
		writeError(w, http.StatusNotFound, "no such approval in %s (revoked already?)", p.Path())
		return
	}
	st.opts.auditLog.WriteEvent("", audit.Revoke{Server: k.Server, Tool: k.Tool, App: k.App, Connector: k.Connector, DefinitionHash: k.Hash, File: p.Path(), By: Channel})
	writeJSON(w, http.StatusOK, map[string]any{"revoked": n, "at": time.Now().UTC()})
}
