/* A budget of 2 calls per session, counted at check time with the C kit's
 * session state (pdk/ABI.md section 12); observe records the last tool.
 * internal/plugin/state_kits_test.go builds it with clang. */
#include "toolwarden.h"

static tw_verdict check(const tw_event *ev) {
	if (tw_state_counter(ev, TW_STR("calls")) >= 2)
		return tw_ask("budget_spent", TW_STR("2 calls already ran in this session"));
	tw_state_add(TW_STR("calls"), 1);
	return tw_allow("within_budget", TW_STR("within the session's budget"));
}

static void observe(const tw_event *ev, tw_names *labels) {
	(void)labels;
	tw_state_set(TW_STR("last_tool"), tw_tool_name(ev));
}

TOOLWARDEN_PLUGIN(.name = "cbudget", .version = "1.0.0", .check = check, .observe = observe, .state = true)
