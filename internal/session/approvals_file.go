package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// FileVersion is the approvals file's schema version. A file of another
// version is refused (nothing granted) and never rewritten: it may belong
// to a newer toolwarden.
const FileVersion = 1

// Errors that describe an approvals file that cannot be used. A file with
// either grants nothing until it is fixed or reset.
var (
	// ErrBadApprovalsFile: not JSON, or not the version 1 shape.
	ErrBadApprovalsFile = errors.New("not a valid approvals file")
	// ErrUnknownVersion: a schema version this toolwarden does not read.
	ErrUnknownVersion = errors.New("approvals file version not supported")
)

// approvalsFile is the on-disk shape.
type approvalsFile struct {
	Version   int     `json:"version"`
	Approvals []Grant `json:"approvals"`
}

// parseGrants reads an approvals file strictly: every field of version 1
// must be present and nothing else may be. A wrong-shaped file is refused
// as a whole: a grant half understood is not a grant.
func parseGrants(path string, data []byte) (map[ApprovalKey]time.Time, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: %w: %s; no \"always\" approval applies until it is fixed (`toolwarden approvals list` shows this error; `toolwarden approvals reset` backs the file up and starts an empty one)",
			path, ErrBadApprovalsFile, fmt.Sprintf(format, a...))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, bad("the file is empty (a version %d file with no approvals is {\"version\": %d, \"approvals\": []})", FileVersion, FileVersion)
	}
	if data = bytes.TrimSpace(data); data[0] != '{' {
		return nil, bad("not a JSON object")
	}
	// The version first, leniently: a newer version may have other fields.
	var v struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, bad("%v", err)
	}
	if v.Version == nil {
		return nil, bad("no \"version\" field")
	}
	if *v.Version != FileVersion {
		return nil, fmt.Errorf("%s: %w: version %d (this toolwarden reads version %d; a newer toolwarden may have written it): no \"always\" approval applies, and the file is left as it is (`toolwarden approvals reset` backs it up and starts an empty one)",
			path, ErrUnknownVersion, *v.Version, FileVersion)
	}
	var f struct {
		Version   int              `json:"version"`
		Approvals *json.RawMessage `json:"approvals"`
	}
	if err := decodeStrict(data, &f); err != nil {
		return nil, bad("%v", err)
	}
	if f.Approvals == nil || bytes.Equal(bytes.TrimSpace(*f.Approvals), []byte("null")) {
		return nil, bad("no \"approvals\" list")
	}
	var grants []Grant
	if err := decodeStrict(*f.Approvals, &grants); err != nil {
		return nil, bad("approvals: %v", err)
	}
	m := make(map[ApprovalKey]time.Time, len(grants))
	for i, g := range grants {
		if err := checkGrant(g); err != nil {
			return nil, bad("approvals[%d]: %v", i, err)
		}
		m[g.ApprovalKey] = g.GrantedAt
	}
	return m, nil
}

// decodeStrict decodes one JSON value with no unknown fields and nothing
// after it.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// checkGrant requires every field a grant needs to match a call.
func checkGrant(g Grant) error {
	for _, f := range []struct{ name, v string }{
		{"app", g.App}, {"server", g.Server}, {"tool", g.Tool}, {"definition_hash", g.Hash},
	} {
		if f.v == "" {
			return fmt.Errorf("%q is missing or empty", f.name)
		}
	}
	if len(g.Hash) != 64 || !isLowerHex(g.Hash) {
		return fmt.Errorf("definition_hash %q is not 64 lowercase hex digits (a SHA-256)", g.Hash)
	}
	if g.GrantedAt.IsZero() {
		return errors.New(`"granted_at" is missing`)
	}
	return nil
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// encodeGrants is the file's bytes for grants, sorted so that equal sets
// write equal files.
func encodeGrants(grants map[ApprovalKey]time.Time) ([]byte, error) {
	f := approvalsFile{Version: FileVersion, Approvals: make([]Grant, 0, len(grants))}
	for k, t := range grants {
		f.Approvals = append(f.Approvals, Grant{k, t})
	}
	sortGrants(f.Approvals)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
