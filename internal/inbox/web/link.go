package web

import (
	"net/http"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

// LinkChannel is the name answers through a one-time link carry.
const LinkChannel = "webhook-link"

// linkPage serves the page for a one-time answer link
// (/a/<ask id>?k=<key>, minted by inbox.MintLink): the key stands in for
// the per-run token, for that one ask only.
func (st *site) linkPage(w http.ResponseWriter, r *http.Request) {
	if inbox.CheckLink(st.dir, r.PathValue("id"), r.URL.Query().Get("k")) != nil {
		forbidden(w)
		return
	}
	serveAsset(w, "index.html")
}

// linkAsk returns the one ask a link is for.
func (st *site) linkAsk(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if inbox.CheckLink(st.dir, id, r.URL.Query().Get("k")) != nil {
		writeError(w, http.StatusForbidden, "%v", inbox.ErrBadLink)
		return
	}
	a, err := inbox.Get(st.dir, id)
	if err != nil {
		writeError(w, http.StatusGone, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, shownAsk(a)) // cut as the list cuts it
}

// linkAnswer answers the link's ask and uses the link up.
func (st *site) linkAnswer(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Key    string `json:"k"`
		Option string `json:"option"`
	}
	if err := readJSON(r, &body); err != nil {
		writeError(w, http.StatusBadRequest, "want {\"k\": \"<key>\", \"option\": \"<option id>\"}: %v", err)
		return
	}
	id := r.PathValue("id")
	// Check the option before using the key up: a mistyped option should
	// not cost the link.
	a, err := inbox.Get(st.dir, id)
	if err == nil && !a.Offers(body.Option) {
		writeError(w, http.StatusBadRequest, "the ask does not offer %q", body.Option)
		return
	}
	if err := inbox.ConsumeLink(st.dir, id, body.Key); err != nil {
		writeError(w, http.StatusForbidden, "%v", err)
		return
	}
	respond(w, st.dir, id, body.Option, LinkChannel)
}
