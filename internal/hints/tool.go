package hints

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Tool is an MCP tool definition as a server listed it, parsed once.
// Parsing happens when the tool list is read, never per call.
type Tool struct {
	Name        string
	Title       string // tool title, else annotations.title
	Description string
	// Raw is the definition exactly as received.
	Raw json.RawMessage
	// Declared holds the hints the server claims, from annotations and
	// namespaced _meta keys. Nothing here is trusted yet.
	Declared Set
	// Annotated holds only the hints of the standard annotations object,
	// without the _meta ones: what Codex reads, so policy can keep its
	// decisions at least as strict as Codex's from the same definition.
	Annotated Set
	// Malformed names hints whose declared value was not a boolean. They are
	// counted at their strict value (see Hint.Strict): a garbled claim never relaxes policy.
	Malformed []string
	// ConnectorID is _meta.connector_id; it names an app only on servers
	// configured with connectors = true.
	ConnectorID string
	// Hash is the SHA-256 of the canonical definition (see DefinitionHash).
	Hash [32]byte
	// HashHex is Hash in lower-case hex, computed once.
	HashHex string
}

// wireTool is the subset of an MCP tool definition that toolwarden reads.
type wireTool struct {
	Name        string                     `json:"name"`
	Title       string                     `json:"title"`
	Description string                     `json:"description"`
	InputSchema json.RawMessage            `json:"inputSchema"`
	Annotations map[string]json.RawMessage `json:"annotations"`
	Meta        map[string]json.RawMessage `json:"_meta"`
}

// ErrNoName is returned for a tool definition without a name.
var ErrNoName = errors.New("tool definition has no name")

// ParseTool parses one tool definition (an element of tools/list's "tools").
func ParseTool(raw []byte) (*Tool, error) {
	var w wireTool
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("tool definition: %w", err)
	}
	if w.Name == "" {
		return nil, ErrNoName
	}
	t := &Tool{Name: w.Name, Title: w.Title, Description: w.Description, Raw: append(json.RawMessage(nil), raw...)}
	if t.Title == "" {
		if v, ok := w.Annotations["title"]; ok {
			_ = json.Unmarshal(v, &t.Title)
		}
	}
	metaHints := t.readMeta(w.Meta)
	// Annotations win over _meta: the annotation is the standard place.
	for k, v := range w.Annotations {
		h, ok := Lookup(k)
		if !ok {
			continue
		}
		t.declare(h, v)
	}
	t.Annotated = t.Declared
	for h, v := range metaHints {
		if t.Declared[h] == Unset {
			t.declare(h, v)
		}
	}
	sum, err := DefinitionHash(w.Name, t.Title, w.Description, w.InputSchema, w.Annotations, metaHints)
	if err != nil {
		return nil, err
	}
	t.Hash = sum
	t.HashHex = hex.EncodeToString(sum[:])
	return t, nil
}

// readMeta collects the connector id and namespaced hints ("<ns>/<hint>")
// from a tool's _meta.
func (t *Tool) readMeta(meta map[string]json.RawMessage) map[Hint]json.RawMessage {
	var out map[Hint]json.RawMessage
	for k, v := range meta {
		if k == "connector_id" {
			_ = json.Unmarshal(v, &t.ConnectorID)
			continue
		}
		i := strings.LastIndexByte(k, '/')
		if i <= 0 {
			continue
		}
		h, ok := Lookup(k[i+1:])
		if !ok {
			continue
		}
		if out == nil {
			out = make(map[Hint]json.RawMessage)
		}
		// With two namespaces claiming one hint, keep the stricter claim.
		if prev, dup := out[h]; dup && bytes.Equal(bytes.TrimSpace(prev), []byte(fmt.Sprint(h.Strict()))) {
			continue
		}
		out[h] = v
	}
	return out
}

func (t *Tool) declare(h Hint, v json.RawMessage) {
	switch string(bytes.TrimSpace(v)) {
	case "true":
		t.Declared[h] = True
	case "false":
		t.Declared[h] = False
	case "null":
		// null is the same as absent.
	default:
		t.Declared[h] = Of(h.Strict())
		t.Malformed = append(t.Malformed, h.Name())
	}
}

// DefinitionHash is SHA-256 over the canonical JSON (sorted keys, no
// insignificant space) of {name, title, description, inputSchema,
// annotations, metaHints}. Title and the _meta hints are included beyond
// the design's four fields because both change what a user is shown or
// what policy sees; see docs/RATIONALE.md.
func DefinitionHash(name, title, description string, inputSchema json.RawMessage, annotations map[string]json.RawMessage, metaHints map[Hint]json.RawMessage) ([32]byte, error) {
	doc := map[string]any{"name": name, "description": description}
	if title != "" {
		doc["title"] = title
	}
	if len(inputSchema) > 0 {
		v, err := decodeNumbers(inputSchema)
		if err != nil {
			return [32]byte{}, fmt.Errorf("tool %q inputSchema: %w", name, err)
		}
		doc["inputSchema"] = v
	}
	if len(annotations) > 0 {
		m := make(map[string]any, len(annotations))
		for k, raw := range annotations {
			v, err := decodeNumbers(raw)
			if err != nil {
				return [32]byte{}, fmt.Errorf("tool %q annotations.%s: %w", name, k, err)
			}
			m[k] = v
		}
		doc["annotations"] = m
	}
	if len(metaHints) > 0 {
		m := make(map[string]any, len(metaHints))
		for h, raw := range metaHints {
			v, err := decodeNumbers(raw)
			if err != nil {
				return [32]byte{}, fmt.Errorf("tool %q _meta hint %s: %w", name, h, err)
			}
			m[h.Name()] = v
		}
		doc["metaHints"] = m
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})), nil
}

func decodeNumbers(raw json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
