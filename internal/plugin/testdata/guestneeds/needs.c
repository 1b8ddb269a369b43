/*
 * A C kit plugin that declares its needs (pdk/ABI.md section 14): it reads
 * only the tool, and its config arrives once per instance, at init
 * (../../guest_needs_test.go).
 */
#include "../../../../pdk/c/toolwarden.h"

static tw_str blocked;

static bool configure(tw_value config, tw_str *error) {
	(void)error;
	tw_string(tw_get(config, "blocked_tool"), &blocked);
	return true;
}

static tw_verdict check(const tw_event *ev) {
	if (blocked.len && tw_str_eq(tw_tool_name(ev), blocked))
		return tw_deny("blocked_tool", TW_STR("this tool is blocked by the policy config"));
	return tw_abstain();
}

TOOLWARDEN_PLUGIN(.name = "needs", .version = "1.0.0", .configure = configure, .check = check,
                  .needs = (const char *const[]){"tool", 0})
