package pdk

// EventInit hands an instance its policy data file, once (pdk/ABI.md
// section 13). Plugin.Data receives it.
const EventInit = 4

// init runs Plugin.Data with the envelope's "data" (a private copy, valid
// forever).
func (p *Plugin) init(e *envelope, out []byte) (uint32, []byte) {
	if p.Data == nil {
		return CodeNotHandled, out
	}
	raw := e.get("data").Raw()
	if raw == nil {
		raw = []byte("null")
	}
	if err := p.Data(Value{b: append([]byte(nil), raw...)}); err != nil {
		p.out = append(out, err.Error()...)
		return CodeBadConfig, p.out
	}
	return CodeOK, out
}
