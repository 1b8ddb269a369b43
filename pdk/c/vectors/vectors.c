/*
 * A test plugin that runs the C kit's helpers on the shared vectors
 * (pdk/testdata/regex.json, shellwords.json) inside the real host:
 * examples/plugins/helpers_test.go loads it with every pattern in its
 * config and asks one case per check.
 *
 * Config: {"patterns": ["...", ...]}, compiled in configure.
 * Check arguments:
 *   {"pattern": i, "input": "..."}: allow "match", deny "nomatch", or deny
 *     "error" with the compile error as the reason;
 *   {"line": "..."}: allow "words" with each word as <UTF-8 length>:<word>,
 *     or deny "error" with the refusal;
 *   {"int64": <number>}: allow "int64" with the value in decimal, or deny
 *     "error";
 *   {"number": <number>}: allow "number" with the double's bits in hex, or
 *     deny "error".
 */
#include "../toolwarden.h"

static tw_regex **regexes;
static tw_str *errors;
static uint32_t npatterns;

static bool configure(tw_value config, tw_str *error) {
	tw_value list = tw_get(config, "patterns");
	tw_iter it = tw_iter_of(list);
	tw_value v;
	while (tw_next_element(&it, &v)) npatterns++;
	regexes = tw_alloc(npatterns * sizeof *regexes + 8);
	errors = tw_alloc(npatterns * sizeof *errors + 8);
	it = tw_iter_of(list);
	for (uint32_t i = 0; tw_next_element(&it, &v); i++) {
		tw_str p;
		if (!tw_string(v, &p)) {
			*error = TW_STR("patterns: want strings");
			return false;
		}
		regexes[i] = tw_regex_compile(p, &errors[i]);
	}
	return true;
}

static void add_uint(tw_buf *b, uint64_t n) {
	char d[20];
	int k = 20;
	do d[--k] = (char)('0' + n % 10);
	while ((n /= 10) != 0);
	tw_buf_add(b, d + k, (uint32_t)(20 - k));
}

static tw_verdict check(const tw_event *ev) {
	tw_value args = tw_arguments(ev);
	tw_str line;
	if (tw_string(tw_get(args, "line"), &line)) {
		tw_str *words, err;
		uint32_t n;
		if (!tw_split_words(line, &words, &n, &err)) return tw_deny("error", err);
		tw_buf b = {0, 0, 0};
		for (uint32_t i = 0; i < n; i++) {
			add_uint(&b, words[i].len);
			tw_buf_byte(&b, ':');
			tw_buf_str(&b, words[i]);
		}
		return tw_allow("words", tw_buf_done(&b));
	}
	if (tw_exists(tw_get(args, "int64"))) {
		int64_t x;
		if (!tw_int64(tw_get(args, "int64"), &x)) return tw_deny("error", TW_STR("not an int64"));
		tw_buf b = {0, 0, 0};
		if (x < 0) tw_buf_byte(&b, '-');
		add_uint(&b, x < 0 ? 0 - (uint64_t)x : (uint64_t)x);
		return tw_allow("int64", tw_buf_done(&b));
	}
	if (tw_exists(tw_get(args, "number"))) {
		double d;
		if (!tw_number(tw_get(args, "number"), &d)) return tw_deny("error", TW_STR("not a number"));
		uint64_t bits;
		memcpy(&bits, &d, 8);
		tw_buf b = {0, 0, 0};
		for (int i = 60; i >= 0; i -= 4) tw_buf_byte(&b, "0123456789abcdef"[(bits >> i) & 15]);
		return tw_allow("number", tw_buf_done(&b));
	}
	int64_t i;
	tw_str input = TW_STR("");
	if (!tw_int64(tw_get(args, "pattern"), &i) || i < 0 || (uint64_t)i >= npatterns)
		return tw_fail(TW_BAD_INPUT, TW_STR("want line, int64, number or a pattern index"));
	tw_string(tw_get(args, "input"), &input);
	if (!regexes[i]) return tw_deny("error", errors[i]);
	return tw_regex_match(regexes[i], input) ? tw_allow("match", TW_STR("")) : tw_deny("nomatch", TW_STR(""));
}

TOOLWARDEN_PLUGIN(.name = "vectors", .version = "1.0.0", .configure = configure, .check = check)
