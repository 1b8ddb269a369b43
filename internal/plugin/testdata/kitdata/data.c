/* Allows calls to the servers the policy's data file lists ({"hosts":[..]})
 * and denies others, with the C kit's data handler (pdk/ABI.md section 13).
 * internal/plugin/data_kits_test.go builds it with clang. */
#include "toolwarden.h"

static tw_value hosts;
static int inits;

static bool data(tw_value d, tw_str *error) {
	(void)error;
	hosts = tw_get(d, "hosts");
	inits++;
	return true;
}

static tw_verdict check(const tw_event *ev) {
	tw_str server = {0, 0};
	tw_string(tw_get(tw_call(ev), "server"), &server);
	tw_iter it = tw_iter_of(hosts);
	tw_value v;
	while (tw_next_element(&it, &v)) {
		tw_str h;
		if (tw_string(v, &h) && tw_str_eq(h, server))
			return tw_allow("listed_host", inits == 1 ? TW_STR("inits=1") : TW_STR("inits>1"));
	}
	return tw_deny("unlisted_host", inits == 1 ? TW_STR("inits=1") : TW_STR("inits>1"));
}

TOOLWARDEN_PLUGIN(.name = "cdata", .version = "1.0.0", .check = check, .data = data)
