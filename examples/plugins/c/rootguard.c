/*
 * rootguard: toolwarden's example policy in C (see ../README.md for the
 * policy; the conformance suite is pdk/testdata/conformance/rootguard.json).
 *
 *   - deny a call whose "command" argument runs rm -rf;
 *   - ask before a call whose "path" argument leaves the configured root;
 *   - else abstain.
 *
 * Build: ./build.sh (freestanding) or ./build-wasi.sh (wasi-libc).
 */
#include "toolwarden.h"

/* The cleaned root from the config; configure runs once per instance and
 * what it allocates lives as long as the instance. */
static tw_str root;
static bool has_root;

/* clean resolves "." and ".." and repeated slashes in an absolute path,
 * lexically, like Go's path.Clean ("/.." is "/"). */
static tw_str clean(tw_str p) {
	char *o = tw_alloc(p.len + 1);
	uint32_t w = 1, i = 0;
	o[0] = '/';
	while (i < p.len) {
		while (i < p.len && p.ptr[i] == '/') i++;
		uint32_t start = i;
		while (i < p.len && p.ptr[i] != '/') i++;
		uint32_t n = i - start;
		if (n == 0 || (n == 1 && p.ptr[start] == '.')) continue;
		if (n == 2 && p.ptr[start] == '.' && p.ptr[start + 1] == '.') {
			while (w > 1 && o[w - 1] != '/') w--;
			if (w > 1) w--;
			continue;
		}
		if (w > 1) o[w++] = '/';
		memcpy(o + w, p.ptr + start, n);
		w += n;
	}
	return (tw_str){o, w};
}

/* within reports whether the clean path p is root or below it. */
static bool within(tw_str p) {
	if (root.len == 1 || tw_str_eq(p, root)) return true;
	return p.len > root.len && tw_has_prefix(p, root) && p.ptr[root.len] == '/';
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_word(char c) {
	return is_letter(c) || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/* runs_rm_rf: "rm" at the start of a word, then white space and flag words
 * ('-' and letters, separated by white space) that hold r (or R) and f. */
static bool runs_rm_rf(tw_str c) {
	for (uint32_t i = 0; i + 2 <= c.len; i++) {
		if (c.ptr[i] != 'r' || c.ptr[i + 1] != 'm' || (i > 0 && is_word(c.ptr[i - 1]))) continue;
		uint32_t j = i + 2;
		bool r = false, f = false;
		for (;;) {
			uint32_t k = j;
			while (k < c.len && is_space(c.ptr[k])) k++;
			if (k == j || k + 1 >= c.len || c.ptr[k] != '-' || !is_letter(c.ptr[k + 1])) break;
			for (k++; k < c.len && is_letter(c.ptr[k]); k++) {
				if (c.ptr[k] == 'r' || c.ptr[k] == 'R') r = true;
				if (c.ptr[k] == 'f') f = true;
			}
			j = k;
		}
		if (r && f) return true;
	}
	return false;
}

static bool configure(tw_value config, tw_str *error) {
	if (tw_kind_of(config) != TW_OBJECT) {
		*error = TW_STR("config: want an object");
		return false;
	}
	tw_value r = tw_get(config, "root");
	if (!tw_exists(r)) return true;
	tw_str s;
	if (!tw_string(r, &s) || s.len == 0 || s.ptr[0] != '/') {
		*error = TW_STR("root: want an absolute path (a string starting with /)");
		return false;
	}
	root = clean(s);
	has_root = true;
	return true;
}

static tw_verdict check(const tw_event *ev) {
	tw_value args = tw_arguments(ev);
	if (tw_exists(args) && !tw_raw(args, NULL))
		return tw_fail(TW_BAD_INPUT, TW_STR("call.arguments is not valid JSON"));
	if (tw_kind_of(args) != TW_OBJECT) return tw_abstain();

	tw_str s;
	if (tw_string(tw_get(args, "command"), &s) && runs_rm_rf(s))
		return tw_deny("rm_rf", TW_STR("command deletes recursively and by force (rm -rf)"));

	if (has_root && tw_string(tw_get(args, "path"), &s)) {
		if (s.len == 0 || s.ptr[0] != '/') { /* relative: join it to the root */
			tw_buf j = {0};
			tw_buf_str(&j, root);
			tw_buf_byte(&j, '/');
			tw_buf_str(&j, s);
			s = tw_buf_done(&j);
		}
		tw_str p = clean(s);
		if (!within(p)) {
			tw_buf reason = {0};
			if (p.len <= 200) {
				tw_buf_cstr(&reason, "path \"");
				tw_buf_str(&reason, p);
				tw_buf_cstr(&reason, "\" is outside the root \"");
			} else {
				tw_buf_cstr(&reason, "path is outside the root \"");
			}
			tw_buf_str(&reason, root);
			tw_buf_byte(&reason, '"');
			return tw_ask("path_outside_root", tw_buf_done(&reason));
		}
	}
	return tw_abstain();
}

TOOLWARDEN_PLUGIN(.name = "rootguard", .version = "1.0.0", .configure = configure, .check = check)
