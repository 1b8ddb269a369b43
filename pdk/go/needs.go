package pdk

// Needs (pdk/ABI.md section 14): a plugin that names the parts of the
// input it reads gets only those, which saves the host building them and
// the guest scanning them. Configure reads the config once per instance;
// when "config" is not among the needs, the kit lists the init event so
// that every instance, not only the one that answered describe, gets its
// config before its first check.

// wantsInit reports whether describe lists init: for the data file, or to
// deliver the config to a plugin that does not need it per event.
func (p *Plugin) wantsInit() bool {
	return p.Data != nil || p.Configure != nil && p.Needs != nil && !needsConfig(p.Needs)
}

// needsConfig reports whether the needs include plugin.config.
func needsConfig(needs []string) bool {
	for _, n := range needs {
		if n == "config" || n == "plugin" {
			return true
		}
	}
	return false
}
