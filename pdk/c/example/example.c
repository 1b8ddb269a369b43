/*
 * The ABI conformance policy of pdk/testdata/README.md ("example") written
 * with the C PDK: it exercises every event (describe, list, check,
 * observe), labels, hints and capabilities. Build and test it:
 *
 *   ./build.sh example.wasm
 *   toolwarden plugin test example.wasm ../../testdata/conformance/cases.json
 */
#include "../toolwarden.h"

static tw_str blocked;

static bool configure(tw_value config, tw_str *error) {
	(void)error;
	tw_string(tw_get(config, "blocked_tool"), &blocked);
	return true;
}

static tw_verdict check(const tw_event *ev) {
	tw_value call = tw_call(ev);
	if (blocked.len && tw_str_eq(tw_tool_name(ev), blocked))
		return tw_deny("blocked_tool", TW_STR("this tool is blocked by the policy config"));
	if (tw_has_label(ev, TW_STR("tainted")) && tw_is_true(tw_get(tw_get(call, "capabilities"), "can_exfiltrate")))
		return tw_ask("tainted_exfiltration", TW_STR("the session is tainted and this tool can send data out"));
	if (tw_is_true(tw_get(tw_get(call, "hints"), "readOnlyHint")))
		return tw_allow("read_only", TW_STR("the tool is read-only"));
	return tw_abstain();
}

static void observe(const tw_event *ev, tw_names *labels) {
	if (tw_is_true(tw_get(tw_get(tw_call(ev), "capabilities"), "sees_untrusted_content")))
		tw_names_add(labels, TW_STR("tainted"));
}

static void list(const tw_event *ev, tw_names *hide) {
	tw_iter it = tw_iter_of(tw_get(ev->input, "tools"));
	tw_value tool;
	tw_str name;
	while (tw_next_element(&it, &tool))
		if (blocked.len && tw_string(tw_get(tool, "name"), &name) && tw_str_eq(name, blocked))
			tw_names_add(hide, name);
}

TOOLWARDEN_PLUGIN(.name = "example", .version = "1.0.0", .configure = configure, .check = check,
                  .observe = observe, .list = list)
