/*
 * toolwarden.h - the C plugin development kit for toolwarden policy plugins
 * (ABI v1, pdk/ABI.md). One header, no dependencies: it works freestanding
 * (clang --target=wasm32 -nostdlib) and with wasi-libc
 * (clang --target=wasm32-wasi -mexec-model=reactor).
 *
 *   #include "toolwarden.h"
 *
 *   static tw_verdict check(const tw_event *ev) {
 *       tw_str cmd;
 *       if (tw_string(tw_get(tw_arguments(ev), "command"), &cmd) && tw_contains(cmd, TW_STR("sudo ")))
 *           return tw_ask("sudo", TW_STR("the command runs sudo"));
 *       return tw_abstain();
 *   }
 *
 *   TOOLWARDEN_PLUGIN(.name = "no-sudo", .version = "1.0.0", .check = check)
 *
 *   clang --target=wasm32 -Os -mbulk-memory -nostdlib -Wl,--no-entry -Wl,--strip-all -o no-sudo.wasm no-sudo.c
 *
 * What it gives you:
 *   - the ABI glue: the toolwarden_abi_v1 marker and toolwarden_handle
 *     exports, the host imports, input reading and output writing
 *     (TOOLWARDEN_PLUGIN defines the exports from your handlers);
 *   - a lazy JSON reader (tw_value): tw_get scans an object only up to the
 *     key it looks for, values are validated as they are scanned;
 *   - typed verdicts (tw_allow, tw_ask, tw_deny, tw_abstain, tw_fail) and a
 *     JSON writer for them;
 *   - an arena (tw_alloc, tw_buf) that is reset after every event, so a
 *     plugin never frees anything.
 *
 * Lifetimes: everything read or allocated during an event is valid until the
 * event returns. The configure handler runs once per instance, before the
 * instance's first event; what it reads or allocates stays valid for the
 * life of the instance, so it may keep pointers in globals.
 *
 * Include this header in exactly one .c file of a plugin (it defines
 * functions). Freestanding, it also defines memcpy, memmove, memset and
 * memcmp (weak), which clang may call; and it owns the heap (the memory
 * above __heap_base): allocate with tw_alloc, not with memory.grow.
 */
#ifndef TOOLWARDEN_H
#define TOOLWARDEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if !defined(__wasm32__)
#error "toolwarden.h builds WebAssembly plugins: compile with clang --target=wasm32 (or wasm32-wasi)"
#endif

#ifdef __wasi__
#include <stdlib.h>
#include <string.h>
#endif

#define TW__API static __attribute__((unused))

/* ------------------------------------------------------------------ */
/* ABI constants (pdk/ABI.md sections 3 and 3.1)                        */

enum {
	TW_EVENT_DESCRIBE = 0,
	TW_EVENT_LIST = 1,
	TW_EVENT_CHECK = 2,
	TW_EVENT_OBSERVE = 3,
	TW_EVENT_INIT = 4, /* the policy's data file, once per instance (ABI section 13) */
};

enum {
	TW_OK = 0,
	TW_NOT_HANDLED = 1,
	TW_BAD_INPUT = 2,
	TW_INTERNAL = 3,
	TW_BAD_CONFIG = 4,
};

typedef enum tw_level { TW_DEBUG = 0, TW_INFO = 1, TW_WARN = 2, TW_ERROR = 3 } tw_level;

/* ------------------------------------------------------------------ */
/* Host imports                                                         */

__attribute__((import_module("toolwarden"), import_name("input_read")))
uint32_t tw__input_read(void *dst, uint32_t len);
__attribute__((import_module("toolwarden"), import_name("output_write")))
uint32_t tw__output_write(const void *src, uint32_t len);
__attribute__((import_module("toolwarden"), import_name("log")))
void tw__log(uint32_t level, const void *ptr, uint32_t len);

/* ------------------------------------------------------------------ */
/* Freestanding memory functions (clang emits calls to them)            */

#ifndef __wasi__
/* With -mbulk-memory (recommended) these are single memory.copy and
 * memory.fill instructions; without it, byte loops. Every guest loop
 * iteration also runs the host's deadline check, so prefer -mbulk-memory. */
#ifdef __wasm_bulk_memory__
__attribute__((weak)) void *memcpy(void *restrict dst, const void *restrict src, size_t n) {
	__builtin_memcpy(dst, src, n); /* lowered to memory.copy, not a call */
	return dst;
}
__attribute__((weak)) void *memmove(void *dst, const void *src, size_t n) {
	__builtin_memmove(dst, src, n);
	return dst;
}
__attribute__((weak)) void *memset(void *dst, int c, size_t n) {
	__builtin_memset(dst, c, n);
	return dst;
}
#else
__attribute__((weak)) void *memcpy(void *restrict dst, const void *restrict src, size_t n) {
	unsigned char *d = dst;
	const unsigned char *s = src;
	while (n--) *d++ = *s++;
	return dst;
}
__attribute__((weak)) void *memmove(void *dst, const void *src, size_t n) {
	unsigned char *d = dst;
	const unsigned char *s = src;
	if (d < s) {
		while (n--) *d++ = *s++;
	} else {
		while (n--) d[n] = s[n];
	}
	return dst;
}
__attribute__((weak)) void *memset(void *dst, int c, size_t n) {
	unsigned char *d = dst;
	while (n--) *d++ = (unsigned char)c;
	return dst;
}
#endif
__attribute__((weak)) int memcmp(const void *a, const void *b, size_t n) {
	const unsigned char *x = a, *y = b;
	for (; n; n--, x++, y++)
		if (*x != *y) return *x < *y ? -1 : 1;
	return 0;
}
__attribute__((weak)) size_t strlen(const char *s) {
	size_t n = 0;
	while (s[n]) n++;
	return n;
}
#endif

/* ------------------------------------------------------------------ */
/* Strings                                                              */

/* tw_str is a byte string with a length. It is not NUL-terminated and may
 * contain NUL bytes (JSON "\u0000"): never pass ptr to a C string function. */
typedef struct tw_str {
	const char *ptr;
	uint32_t len;
} tw_str;

/* TW_STR("literal") is a tw_str of a string literal. */
#define TW_STR(lit) ((tw_str){(lit), (uint32_t)(sizeof(lit) - 1)})

/* tw_cstr wraps a NUL-terminated string (a literal's length is computed
 * at compile time). */
static inline tw_str tw_cstr(const char *s) { return (tw_str){s, s ? (uint32_t)__builtin_strlen(s) : 0}; }

TW__API bool tw_str_eq(tw_str a, tw_str b) {
	return a.len == b.len && (a.len == 0 || __builtin_memcmp(a.ptr, b.ptr, a.len) == 0);
}

TW__API bool tw_has_prefix(tw_str s, tw_str prefix) {
	return s.len >= prefix.len && tw_str_eq((tw_str){s.ptr, prefix.len}, prefix);
}

TW__API bool tw_contains(tw_str s, tw_str sub) {
	for (uint32_t i = 0; i + sub.len <= s.len; i++)
		if (tw_str_eq((tw_str){s.ptr + i, sub.len}, sub)) return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* The arena                                                            */

/* tw_alloc returns n bytes (8-aligned) that live until the event returns
 * (or, inside configure, for the life of the instance). It traps when the
 * plugin's memory limit is reached; the host then reports the limit. */
TW__API void *tw_alloc(uint32_t n);

#ifdef __wasi__
/* With wasi-libc, malloc owns the heap; the arena is a list of malloc'd
 * chunks. Chunks newer than the floor are freed after each event. */
typedef struct tw__chunk {
	struct tw__chunk *next;
	uint32_t size;
	uint32_t pad;
} tw__chunk;
static tw__chunk *tw__chunks, *tw__floor_chunk;
static uint8_t *tw__p, *tw__e, *tw__floor_p;

TW__API void *tw_alloc(uint32_t n) {
	n = (n + 7u) & ~7u;
	if ((uint32_t)(tw__e - tw__p) < n) {
		uint32_t size = n + (uint32_t)sizeof(tw__chunk);
		if (size < 65536) size = 65536;
		tw__chunk *c = malloc(size);
		if (!c) __builtin_trap();
		c->next = tw__chunks;
		c->size = size;
		tw__chunks = c;
		tw__p = (uint8_t *)(c + 1);
		tw__e = (uint8_t *)c + size;
	}
	void *r = tw__p;
	tw__p += n;
	return r;
}

static void tw__arena_reset(void) {
	while (tw__chunks != tw__floor_chunk) {
		tw__chunk *next = tw__chunks->next;
		free(tw__chunks);
		tw__chunks = next;
	}
	tw__p = tw__floor_p;
	tw__e = tw__floor_chunk ? (uint8_t *)tw__floor_chunk + tw__floor_chunk->size : NULL;
}

static void tw__arena_keep(void) {
	tw__floor_chunk = tw__chunks;
	tw__floor_p = tw__p;
}
#else
/* Freestanding, the arena is the heap: from __heap_base up, grown with
 * memory.grow. After each event the top goes back to the floor. */
extern unsigned char __heap_base;
static uintptr_t tw__top, tw__floor;

TW__API void *tw_alloc(uint32_t n) {
	if (!tw__top) tw__top = tw__floor = ((uintptr_t)&__heap_base + 15u) & ~(uintptr_t)15u;
	uint64_t p = ((uint64_t)tw__top + 7u) & ~(uint64_t)7u;
	uint64_t end = p + n;
	uint64_t size = (uint64_t)__builtin_wasm_memory_size(0) << 16;
	if (end > size) {
		uint64_t need = (end - size + 0xffffu) >> 16;
		uint64_t have = size >> 16;
		/* Double when possible, to grow rarely; else exactly what is needed. */
		if (__builtin_wasm_memory_grow(0, (uintptr_t)(need > have ? need : have)) < 0 &&
		    __builtin_wasm_memory_grow(0, (uintptr_t)need) < 0)
			__builtin_trap();
	}
	tw__top = (uintptr_t)end;
	return (void *)(uintptr_t)p;
}

static void tw__arena_reset(void) { tw__top = tw__floor; }
static void tw__arena_keep(void) { tw__floor = tw__top; }
#endif

/* tw_buf builds a string in the arena. */
typedef struct tw_buf {
	char *ptr;
	uint32_t len, cap;
} tw_buf;

TW__API void tw_buf_add(tw_buf *b, const void *src, uint32_t n) {
	if (b->cap - b->len < n) {
		uint32_t cap = b->cap * 2;
		if (cap < b->len + n) cap = b->len + n;
		if (cap < 64) cap = 64;
		char *p = tw_alloc(cap);
		if (b->len) memcpy(p, b->ptr, b->len);
		b->ptr = p;
		b->cap = cap;
	}
	if (n) memcpy(b->ptr + b->len, src, n);
	b->len += n;
}
TW__API void tw_buf_str(tw_buf *b, tw_str s) { tw_buf_add(b, s.ptr, s.len); }
TW__API void tw_buf_cstr(tw_buf *b, const char *s) { tw_buf_str(b, tw_cstr(s)); }
TW__API void tw_buf_byte(tw_buf *b, char c) { tw_buf_add(b, &c, 1); }
TW__API tw_str tw_buf_done(const tw_buf *b) { return (tw_str){b->ptr, b->len}; }

/* ------------------------------------------------------------------ */
/* Reading JSON                                                         */

/* tw_value is one JSON value of the input. p is its first byte and end the
 * end of the document: a value is scanned only as far as a reader needs.
 * p == NULL means missing (an absent key, or input too malformed to reach
 * it); every reader returns its "not found" answer for it. */
typedef struct tw_value {
	const uint8_t *p, *end;
} tw_value;

typedef enum tw_kind { TW_MISSING, TW_NULL, TW_BOOL, TW_NUMBER, TW_STRING, TW_ARRAY, TW_OBJECT } tw_kind;

/* The deepest nesting of arrays and objects a scan accepts. */
#define TW_MAX_DEPTH 256

static const tw_value tw__missing = {0, 0};

static inline bool tw__isws(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static const uint8_t *tw__ws_loop(const uint8_t *p, const uint8_t *e) {
	while (p < e && tw__isws(*p)) p++;
	return p;
}

/* The host sends no white space, so the common case does not enter a loop
 * (every loop iteration also runs the host's deadline check). */
static inline const uint8_t *tw__ws(const uint8_t *p, const uint8_t *e) {
	return p < e && *p <= ' ' ? tw__ws_loop(p, e) : p;
}

static int tw__hex(uint8_t c) {
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

/* tw__hex4 reads 4 hex digits at p (p+4 <= e checked by the caller). */
static int32_t tw__hex4(const uint8_t *p) {
	int a = tw__hex(p[0]), b = tw__hex(p[1]), c = tw__hex(p[2]), d = tw__hex(p[3]);
	if ((a | b | c | d) < 0) return -1;
	return a << 12 | b << 8 | c << 4 | d;
}

/* tw__special has the high bit set in each byte of x that may be '"', '\\'
 * or below 0x20; the lowest set byte is always exact. */
static inline uint64_t tw__special(uint64_t x) {
	const uint64_t lo = 0x0101010101010101ull, hi = 0x8080808080808080ull;
	uint64_t q = x ^ (lo * '"'), b = x ^ (lo * '\\');
	return (((q - lo) & ~q) | ((b - lo) & ~b) | ((x - lo * 0x20) & ~x)) & hi;
}

/* tw__skip_string skips the string at p (*p == '"'); NULL if malformed.
 * *escaped tells whether it holds an escape. One loop, 8 bytes a step. */
static const uint8_t *tw__skip_string(const uint8_t *p, const uint8_t *e, bool *escaped) {
	*escaped = false;
	p++;
	for (;;) {
		if (e - p >= 8) {
			uint64_t x;
			memcpy(&x, p, 8);
			uint64_t m = tw__special(x);
			if (!m) {
				p += 8;
				continue;
			}
			p += __builtin_ctzll(m) >> 3;
		} else if (p >= e) {
			return NULL;
		} else if (*p != '"' && *p != '\\' && *p >= 0x20) {
			p++;
			continue;
		}
		if (*p == '"') return p + 1;
		if (*p < 0x20) return NULL;
		/* a backslash */
		*escaped = true;
		if (e - p < 2) return NULL;
		switch (p[1]) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			p += 2;
			break;
		case 'u':
			if (e - p < 6 || tw__hex4(p + 2) < 0) return NULL;
			p += 6;
			break;
		default:
			return NULL;
		}
	}
}

static const uint8_t *tw__skip_number(const uint8_t *p, const uint8_t *e) {
	if (p < e && *p == '-') p++;
	if (p < e && *p == '0') {
		p++;
	} else if (p < e && *p >= '1' && *p <= '9') {
		while (p < e && *p >= '0' && *p <= '9') p++;
	} else {
		return NULL;
	}
	if (p < e && *p == '.') {
		const uint8_t *d = ++p;
		while (p < e && *p >= '0' && *p <= '9') p++;
		if (p == d) return NULL;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < e && (*p == '+' || *p == '-')) p++;
		const uint8_t *d = p;
		while (p < e && *p >= '0' && *p <= '9') p++;
		if (p == d) return NULL;
	}
	return p;
}

/* tw__literal matches true, false or null (n bytes of lit) at p, without a
 * loop. */
static const uint8_t *tw__literal(const uint8_t *p, const uint8_t *e, const char *lit, uint32_t n) {
	if ((uint32_t)(e - p) < n) return NULL;
	uint32_t x, y;
	memcpy(&x, p, 4);
	memcpy(&y, lit, 4);
	if (x != y || (n == 5 && p[4] != (uint8_t)lit[4])) return NULL;
	return p + n;
}

/* tw__skip validates and skips one value at p; NULL if malformed or nested
 * deeper than TW_MAX_DEPTH. It keeps its own stack, so it never recurses. */
static const uint8_t *tw__skip(const uint8_t *p, const uint8_t *e) {
	uint8_t in_object[TW_MAX_DEPTH + 1];
	int depth = 0;
	bool esc;
value:
	if (p >= e) return NULL;
	switch (*p) {
	case '{':
		if (++depth > TW_MAX_DEPTH) return NULL;
		in_object[depth] = 1;
		p = tw__ws(p + 1, e);
		if (p < e && *p == '}') {
			p++;
			depth--;
			goto after;
		}
		goto key;
	case '[':
		if (++depth > TW_MAX_DEPTH) return NULL;
		in_object[depth] = 0;
		p = tw__ws(p + 1, e);
		if (p < e && *p == ']') {
			p++;
			depth--;
			goto after;
		}
		goto value;
	case '"':
		p = tw__skip_string(p, e, &esc);
		break;
	case 't':
		p = tw__literal(p, e, "true", 4);
		break;
	case 'f':
		p = tw__literal(p, e, "false", 5);
		break;
	case 'n':
		p = tw__literal(p, e, "null", 4);
		break;
	default:
		p = tw__skip_number(p, e);
	}
	if (!p) return NULL;
after:
	if (depth == 0) return p;
	p = tw__ws(p, e);
	if (p >= e) return NULL;
	if (*p == ',') {
		p = tw__ws(p + 1, e);
		if (in_object[depth]) goto key;
		goto value;
	}
	if (*p == (in_object[depth] ? '}' : ']')) {
		p++;
		depth--;
		goto after;
	}
	return NULL;
key:
	if (p >= e || *p != '"') return NULL;
	p = tw__skip_string(p, e, &esc);
	if (!p) return NULL;
	p = tw__ws(p, e);
	if (p >= e || *p != ':') return NULL;
	p = tw__ws(p + 1, e);
	goto value;
}

static void tw__utf8(tw_buf *b, uint32_t r) {
	char t[4];
	uint32_t n;
	if (r < 0x80) {
		t[0] = (char)r;
		n = 1;
	} else if (r < 0x800) {
		t[0] = (char)(0xC0 | r >> 6);
		t[1] = (char)(0x80 | (r & 0x3F));
		n = 2;
	} else if (r < 0x10000) {
		t[0] = (char)(0xE0 | r >> 12);
		t[1] = (char)(0x80 | (r >> 6 & 0x3F));
		t[2] = (char)(0x80 | (r & 0x3F));
		n = 3;
	} else {
		t[0] = (char)(0xF0 | r >> 18);
		t[1] = (char)(0x80 | (r >> 12 & 0x3F));
		t[2] = (char)(0x80 | (r >> 6 & 0x3F));
		t[3] = (char)(0x80 | (r & 0x3F));
		n = 4;
	}
	tw_buf_add(b, t, n);
}

/* tw__decode decodes the (validated) body of a string with escapes. A
 * surrogate that is not part of a pair becomes U+FFFD. */
static tw_str tw__decode(const uint8_t *s, const uint8_t *e) {
	tw_buf b = {0};
	b.ptr = tw_alloc((uint32_t)(e - s));
	b.cap = (uint32_t)(e - s);
	while (s < e) {
		const uint8_t *run = s;
		while (s < e && *s != '\\') s++;
		tw_buf_add(&b, run, (uint32_t)(s - run));
		if (s >= e) break;
		s++;
		uint8_t c = *s++;
		switch (c) {
		case 'b': tw_buf_byte(&b, '\b'); break;
		case 'f': tw_buf_byte(&b, '\f'); break;
		case 'n': tw_buf_byte(&b, '\n'); break;
		case 'r': tw_buf_byte(&b, '\r'); break;
		case 't': tw_buf_byte(&b, '\t'); break;
		case 'u': {
			uint32_t r = (uint32_t)tw__hex4(s);
			s += 4;
			if (r >= 0xD800 && r < 0xE000) {
				if (r < 0xDC00 && e - s >= 6 && s[0] == '\\' && s[1] == 'u') {
					int32_t r2 = tw__hex4(s + 2);
					if (r2 >= 0xDC00 && r2 < 0xE000) {
						r = 0x10000 + ((r - 0xD800) << 10) + ((uint32_t)r2 - 0xDC00);
						s += 6;
					}
				}
				if (r >= 0xD800 && r < 0xE000) r = 0xFFFD;
			}
			tw__utf8(&b, r);
			break;
		}
		default: tw_buf_byte(&b, (char)c); /* '"', '\\', '/' */
		}
	}
	return tw_buf_done(&b);
}

/* tw__string reads the string at p: the decoded text, and where it ends. */
static const uint8_t *tw__string(const uint8_t *p, const uint8_t *e, tw_str *out) {
	bool esc;
	const uint8_t *end = tw__skip_string(p, e, &esc);
	if (!end) return NULL;
	if (esc)
		*out = tw__decode(p + 1, end - 1);
	else
		*out = (tw_str){(const char *)p + 1, (uint32_t)(end - p - 2)};
	return end;
}

/* tw_kind_of is a value's JSON type, from its first byte. */
TW__API tw_kind tw_kind_of(tw_value v) {
	if (!v.p || v.p >= v.end) return TW_MISSING;
	switch (*v.p) {
	case 'n': return TW_NULL;
	case 't': case 'f': return TW_BOOL;
	case '"': return TW_STRING;
	case '[': return TW_ARRAY;
	case '{': return TW_OBJECT;
	}
	return TW_NUMBER;
}

/* tw_exists: the value is present (null counts as present). */
TW__API bool tw_exists(tw_value v) { return v.p != NULL && v.p < v.end; }

/* tw_raw is the value's JSON text; false if it is missing or malformed.
 * It validates the whole value. */
TW__API bool tw_raw(tw_value v, tw_str *out) {
	if (!tw_exists(v)) return false;
	const uint8_t *end = tw__skip(v.p, v.end);
	if (!end) return false;
	if (out) *out = (tw_str){(const char *)v.p, (uint32_t)(end - v.p)};
	return true;
}

/* tw_string reads a string value (escapes decoded); false for any other
 * kind, or a malformed string. */
TW__API bool tw_string(tw_value v, tw_str *out) {
	if (tw_kind_of(v) != TW_STRING) return false;
	tw_str s;
	if (!tw__string(v.p, v.end, &s)) return false;
	if (out) *out = s;
	return true;
}

/* tw_bool reads true or false. */
TW__API bool tw_bool(tw_value v, bool *out) {
	if (tw__literal(v.p, v.end, "true", 4)) {
		*out = true;
		return true;
	}
	if (tw__literal(v.p, v.end, "false", 5)) {
		*out = false;
		return true;
	}
	return false;
}

/* tw_is_true: the value is the literal true. */
TW__API bool tw_is_true(tw_value v) { return v.p && tw__literal(v.p, v.end, "true", 4) != NULL; }

/* Iterating objects and arrays:
 *
 *   tw_iter it = tw_iter_of(obj);
 *   tw_str key; tw_value val;
 *   while (tw_next_member(&it, &key, &val)) { ... }
 *   if (it.bad) ... // the object was malformed where the loop stopped
 *
 * Each step skips (and so validates) the previous value. */
typedef struct tw_iter {
	const uint8_t *p, *end, *val;
	bool first, done, bad;
} tw_iter;

TW__API tw_iter tw_iter_of(tw_value v) {
	tw_iter it = {0};
	tw_kind k = tw_kind_of(v);
	if (k != TW_OBJECT && k != TW_ARRAY) {
		it.done = it.bad = true;
		return it;
	}
	it.p = v.p + 1;
	it.end = v.end;
	it.first = true;
	return it;
}

/* tw__step moves past the previous value and its separator; false at the
 * end (close is '}' or ']'). */
static bool tw__step(tw_iter *it, uint8_t close) {
	if (it->done) return false;
	const uint8_t *p = it->p, *e = it->end;
	if (it->first) {
		it->first = false;
		p = tw__ws(p, e);
		if (p < e && *p == close) {
			it->done = true;
			return false;
		}
	} else {
		p = tw__skip(it->val, e);
		if (p) p = tw__ws(p, e);
		if (!p || p >= e || (*p != ',' && *p != close)) {
			it->done = it->bad = true;
			return false;
		}
		if (*p == close) {
			it->done = true;
			return false;
		}
		p++;
	}
	it->p = tw__ws(p, e);
	return true;
}

TW__API bool tw_next_member(tw_iter *it, tw_str *key, tw_value *val) {
	if (!tw__step(it, '}')) return false;
	const uint8_t *p = it->p, *e = it->end;
	tw_str k;
	if (p >= e || *p != '"' || !(p = tw__string(p, e, &k))) goto bad;
	p = tw__ws(p, e);
	if (p >= e || *p != ':') goto bad;
	p = tw__ws(p + 1, e);
	it->val = it->p = p;
	if (key) *key = k;
	if (val) *val = (tw_value){p, e};
	return true;
bad:
	it->done = it->bad = true;
	return false;
}

TW__API bool tw_next_element(tw_iter *it, tw_value *val) {
	if (!tw__step(it, ']')) return false;
	it->val = it->p;
	if (val) *val = (tw_value){it->p, it->end};
	return true;
}

/* tw_get_str returns the first member of an object named key, or missing. */
TW__API tw_value tw_get_str(tw_value obj, tw_str key) {
	if (tw_kind_of(obj) != TW_OBJECT) return tw__missing;
	tw_iter it = tw_iter_of(obj);
	tw_str k;
	tw_value v;
	while (tw_next_member(&it, &k, &v))
		if (tw_str_eq(k, key)) return v;
	return tw__missing;
}

/* tw_get is tw_get_str with a C string key. */
static inline tw_value tw_get(tw_value obj, const char *key) { return tw_get_str(obj, tw_cstr(key)); }

/* tw_index returns element i of an array, or missing. */
TW__API tw_value tw_index(tw_value arr, uint32_t i) {
	if (tw_kind_of(arr) != TW_ARRAY) return tw__missing;
	tw_iter it = tw_iter_of(arr);
	tw_value v;
	for (uint32_t n = 0; tw_next_element(&it, &v); n++)
		if (n == i) return v;
	return tw__missing;
}

/* ------------------------------------------------------------------ */
/* Events                                                               */

/* tw_event is the input of one event: a JSON object (pdk/ABI.md section 4). */
typedef struct tw_event {
	uint32_t event;
	tw_value input;
} tw_event;

/* The usual keys. Each scans the input only as far as it needs. */
TW__API tw_value tw_call(const tw_event *ev) { return tw_get(ev->input, "call"); }
TW__API tw_value tw_arguments(const tw_event *ev) { return tw_get(tw_call(ev), "arguments"); }
TW__API tw_value tw_session(const tw_event *ev) { return tw_get(ev->input, "session"); }
TW__API tw_str tw_tool_name(const tw_event *ev) {
	tw_str s = {"", 0};
	tw_string(tw_get(tw_get(tw_call(ev), "tool"), "name"), &s);
	return s;
}

/* tw_has_label reports whether the session carries a label. */
TW__API bool tw_has_label(const tw_event *ev, tw_str label) {
	tw_iter it = tw_iter_of(tw_get(tw_session(ev), "labels"));
	tw_value v;
	tw_str s;
	while (tw_next_element(&it, &v))
		if (tw_string(v, &s) && tw_str_eq(s, label)) return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* Verdicts and output                                                  */

typedef enum tw_decision { TW_ABSTAIN = 0, TW_ALLOW, TW_ASK, TW_DENY } tw_decision;

/* tw_verdict is the answer to a check (pdk/ABI.md section 5.2). */
typedef struct tw_verdict {
	tw_decision decision;
	/* code: a stable machine code, [a-z0-9_.:-]{1,64}; NULL means "plugin". */
	const char *code;
	/* reason: shown to the human. */
	tw_str reason;
	/* remember: may an approval of this ask be remembered for the session?
	 * Leave it false when asking because of arguments: the host remembers
	 * approvals per tool, not per argument. */
	bool remember;
	/* labels: session labels to add. */
	const tw_str *labels;
	uint32_t nlabels;
	/* fail: when not 0, the event fails with this ABI code (e.g.
	 * TW_BAD_INPUT) and reason is the message. Use tw_fail. */
	uint32_t fail;
} tw_verdict;

TW__API tw_verdict tw_abstain(void) { return (tw_verdict){TW_ABSTAIN, 0, {"", 0}, false, 0, 0, 0}; }
TW__API tw_verdict tw_allow(const char *code, tw_str reason) { return (tw_verdict){TW_ALLOW, code, reason, false, 0, 0, 0}; }
TW__API tw_verdict tw_ask(const char *code, tw_str reason) { return (tw_verdict){TW_ASK, code, reason, false, 0, 0, 0}; }
TW__API tw_verdict tw_deny(const char *code, tw_str reason) { return (tw_verdict){TW_DENY, code, reason, false, 0, 0, 0}; }
TW__API tw_verdict tw_fail(uint32_t code, tw_str message) { return (tw_verdict){TW_ABSTAIN, 0, message, false, 0, 0, code}; }

/* tw_names collects the labels of an observe or the tools to hide of a list. */
typedef struct tw_names {
	tw_buf items;
	uint32_t n;
	uint32_t fail;
	tw_str message;
} tw_names;

static void tw__json_string(tw_buf *b, tw_str s);

TW__API void tw_names_add(tw_names *names, tw_str name) {
	if (names->n++) tw_buf_byte(&names->items, ',');
	tw__json_string(&names->items, name);
}

/* tw_names_fail makes the event fail with an ABI code and a message. */
TW__API void tw_names_fail(tw_names *names, uint32_t code, tw_str message) {
	names->fail = code;
	names->message = message;
}

/* tw_log writes a message to the host's log (capped by the host). */
TW__API void tw_log(tw_level level, tw_str msg) { tw__log((uint32_t)level, msg.ptr, msg.len); }

/* tw__utf8_len is the length of the valid UTF-8 sequence at s, or 0. */
static uint32_t tw__utf8_len(const uint8_t *s, const uint8_t *e) {
	uint8_t c = s[0];
	uint32_t n;
	uint8_t lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF) n = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0) lo = 0xA0;
		if (c == 0xED) hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0) lo = 0x90;
		if (c == 0xF4) hi = 0x8F;
	} else
		return 0;
	if ((uint32_t)(e - s) < n || s[1] < lo || s[1] > hi) return 0;
	for (uint32_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xBF) return 0;
	return n;
}

/* tw__json_string writes s as a JSON string: quotes, backslashes and
 * control characters escaped, invalid UTF-8 as U+FFFD. */
static void tw__json_string(tw_buf *b, tw_str str) {
	static const char hex[] = "0123456789abcdef";
	const uint8_t *s = (const uint8_t *)str.ptr, *e = s + str.len, *run = s;
	tw_buf_byte(b, '"');
	while (s < e) {
		if (e - s >= 8) { /* 8 plain ASCII bytes at a time */
			uint64_t x;
			memcpy(&x, s, 8);
			if (!(tw__special(x) | (x & 0x8080808080808080ull))) {
				s += 8;
				continue;
			}
		}
		uint8_t c = *s;
		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			s++;
			continue;
		}
		if (c >= 0x80) {
			uint32_t n = tw__utf8_len(s, e);
			if (n) {
				s += n;
				continue;
			}
		}
		tw_buf_add(b, run, (uint32_t)(s - run));
		switch (c) {
		case '"': tw_buf_add(b, "\\\"", 2); break;
		case '\\': tw_buf_add(b, "\\\\", 2); break;
		case '\n': tw_buf_add(b, "\\n", 2); break;
		case '\t': tw_buf_add(b, "\\t", 2); break;
		case '\r': tw_buf_add(b, "\\r", 2); break;
		default:
			if (c >= 0x80) {
				tw_buf_add(b, "\\ufffd", 6);
			} else {
				char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
				tw_buf_add(b, u, 6);
			}
		}
		run = ++s;
	}
	tw_buf_add(b, run, (uint32_t)(s - run));
	tw_buf_byte(b, '"');
}

/* ------------------------------------------------------------------ */
/* The plugin                                                           */

/* tw_plugin names the plugin and its handlers; leave a handler NULL for an
 * event the plugin does not handle (describe is answered for you). */
typedef struct tw_plugin {
	const char *name;
	const char *version;
	/* configure validates and reads the policy's config (an object; {} when
	 * the user gave none), once per instance before its first event. It
	 * returns false with *error set to refuse the config: every event then
	 * fails with TW_BAD_CONFIG, and at load the plugin is refused. */
	bool (*configure)(tw_value config, tw_str *error);
	tw_verdict (*check)(const tw_event *ev);
	void (*observe)(const tw_event *ev, tw_names *labels);
	void (*list)(const tw_event *ev, tw_names *hide);
	/* state: true asks for per-session state (tw_state_*). */
	bool state;
	/* data receives the policy's data file (JSON; null when the policy has
	 * none) once per instance, before its first other event; what it reads
	 * stays valid for the instance's life. It returns false with *error set
	 * to fail the instance (pdk/ABI.md section 13). */
	bool (*data)(tw_value data, tw_str *error);
	/* needs names the input parts the plugin reads (pdk/ABI.md section 14),
	 * a NULL-terminated array such as (const char *const[]){"labels",
	 * "tool", NULL}; NULL (the default) means everything. Without "config"
	 * among them, describe lists init and each instance gets its config
	 * there, before its first other event. */
	const char *const *needs;
} tw_plugin;

/* tw__wants_init: describe lists init, for the data file or to hand the
 * config to every instance of a plugin that does not need it per event. */
static bool tw__wants_init(const tw_plugin *pl) {
	if (pl->data) return true;
	if (!pl->needs) return false;
	for (const char *const *n = pl->needs; *n; n++)
		if (tw_str_eq(tw_cstr(*n), TW_STR("config")) || tw_str_eq(tw_cstr(*n), TW_STR("plugin"))) return false;
	return true;
}

static bool tw__configured;
static uint32_t tw__config_code;
static tw_str tw__config_error;

static void tw__configure(const tw_plugin *pl, tw_value root) {
	tw__configured = true;
	tw_value cfg = tw_get(tw_get(root, "plugin"), "config");
	tw_str raw = TW_STR("{}");
	if (pl->needs && !tw_exists(tw_get(root, "plugin"))) {
		/* Configured at init, which always carries the plugin block:
		 * reading {} instead would run on a config the user did not write. */
		tw__config_code = TW_INTERNAL;
		tw__config_error = TW_STR("toolwarden.h: the instance's first event carried no plugin config (the host must send init first: pdk/ABI.md section 14)");
		return;
	}
	if (tw_exists(cfg) && !tw_raw(cfg, &raw)) {
		tw__config_code = TW_BAD_CONFIG;
		tw__config_error = TW_STR("config is not valid JSON");
		return;
	}
	if (pl->configure) {
		tw_str err = TW_STR("bad config");
		tw_value v = {(const uint8_t *)raw.ptr, (const uint8_t *)raw.ptr + raw.len};
		if (!pl->configure(v, &err)) {
			tw__config_code = TW_BAD_CONFIG;
			tw__config_error = err;
		}
	}
}

static void tw__events(tw_buf *b, const tw_plugin *pl) {
	int n = 0;
	if (pl->list) { tw_buf_cstr(b, "\"list\""); n++; }
	if (pl->check) { if (n++) tw_buf_byte(b, ','); tw_buf_cstr(b, "\"check\""); }
	if (pl->observe) { if (n++) tw_buf_byte(b, ','); tw_buf_cstr(b, "\"observe\""); }
	if (tw__wants_init(pl)) { if (n++) tw_buf_byte(b, ','); tw_buf_cstr(b, "\"init\""); }
}

static const char *const tw__decisions[] = {"abstain", "allow", "ask", "deny"};

/* Session state, defined below with its accessors. */
static void tw__state_begin(void);
static void tw__state_end(bool stateful, uint32_t event, uint32_t code, tw_buf *out);

/* tw__run handles one event: toolwarden_handle's body. */
static uint32_t tw__run(const tw_plugin *pl, uint32_t event, uint32_t input_len) {
	uint32_t code = TW_OK;
	tw_buf out = {0};
	bool configuring = false;
	uint8_t *in = tw_alloc(input_len);
	uint32_t n = 0;
	while (n < input_len) {
		uint32_t got = tw__input_read(in + n, input_len - n);
		if (!got) break;
		n += got;
	}
	tw_event ev = {event, {in, in + n}};
	const uint8_t *p = tw__ws(in, in + n);
	if (p >= in + n || *p != '{') {
		code = TW_BAD_INPUT;
		tw_buf_cstr(&out, "input is not a JSON object");
		goto write;
	}
	ev.input.p = p;
	if (!tw__configured) {
		configuring = true;
		tw__configure(pl, ev.input);
	}
	if (tw__config_code) {
		code = tw__config_code;
		tw_buf_str(&out, tw__config_error);
		goto write;
	}
	tw__state_begin();
	switch (event) {
	case TW_EVENT_DESCRIBE:
		tw_buf_cstr(&out, "{\"name\":");
		tw__json_string(&out, tw_cstr(pl->name));
		tw_buf_cstr(&out, ",\"version\":");
		tw__json_string(&out, tw_cstr(pl->version));
		tw_buf_cstr(&out, ",\"events\":[");
		tw__events(&out, pl);
		tw_buf_byte(&out, ']');
		if (pl->needs) {
			tw_buf_cstr(&out, ",\"needs\":[");
			for (const char *const *n = pl->needs; *n; n++) {
				if (n != pl->needs) tw_buf_byte(&out, ',');
				tw__json_string(&out, tw_cstr(*n));
			}
			tw_buf_byte(&out, ']');
		}
		tw_buf_byte(&out, '}');
		break;
	case TW_EVENT_CHECK: {
		if (!pl->check) {
			code = TW_NOT_HANDLED;
			break;
		}
		tw_verdict v = pl->check(&ev);
		if (v.fail) {
			code = v.fail;
			tw_buf_str(&out, v.reason);
			break;
		}
		tw_buf_cstr(&out, "{\"decision\":\"");
		tw_buf_cstr(&out, tw__decisions[v.decision <= TW_DENY ? v.decision : 0]);
		tw_buf_byte(&out, '"');
		if (v.code && v.code[0]) {
			tw_buf_cstr(&out, ",\"code\":");
			tw__json_string(&out, tw_cstr(v.code));
		}
		if (v.reason.len) {
			tw_buf_cstr(&out, ",\"reason\":");
			tw__json_string(&out, v.reason);
		}
		if (v.remember) tw_buf_cstr(&out, ",\"remember\":true");
		if (v.nlabels) {
			tw_buf_cstr(&out, ",\"labels\":[");
			for (uint32_t i = 0; i < v.nlabels; i++) {
				if (i) tw_buf_byte(&out, ',');
				tw__json_string(&out, v.labels[i]);
			}
			tw_buf_byte(&out, ']');
		}
		tw_buf_byte(&out, '}');
		break;
	}
	case TW_EVENT_OBSERVE:
	case TW_EVENT_LIST: {
		void (*fn)(const tw_event *, tw_names *) = event == TW_EVENT_LIST ? pl->list : pl->observe;
		if (!fn) {
			code = TW_NOT_HANDLED;
			break;
		}
		tw_names names = {0};
		fn(&ev, &names);
		if (names.fail) {
			code = names.fail;
			tw_buf_str(&out, names.message);
		} else if (names.n) {
			tw_buf_cstr(&out, event == TW_EVENT_LIST ? "{\"hide\":[" : "{\"labels\":[");
			tw_buf_str(&out, tw_buf_done(&names.items));
			tw_buf_cstr(&out, "]}");
		}
		break;
	}
	case TW_EVENT_INIT: {
		if (!pl->data) {
			/* Listed only to configure the instance, done above. */
			code = tw__wants_init(pl) ? TW_OK : TW_NOT_HANDLED;
			break;
		}
		configuring = true; /* the data's memory lives on */
		tw_str err = TW_STR("bad data");
		if (!pl->data(tw_get(ev.input, "data"), &err)) {
			code = TW_BAD_CONFIG;
			tw_buf_str(&out, err);
		}
		break;
	}
	default:
		code = TW_NOT_HANDLED;
	}
write:
	tw__state_end(pl->state, event, code, &out);
	if (out.len && tw__output_write(out.ptr, out.len) != 0) code = TW_INTERNAL;
	if (configuring)
		tw__arena_keep(); /* what configure read and allocated lives on */
	else
		tw__arena_reset();
	return code;
}

/* ------------------------------------------------------------------ */
/* Numbers                                                              */

/* tw_int64 reads a number whose value is an integer within int64, in any
 * JSON form (3, -3, 3.0, 3e2, 300e-2); false for anything else (a fraction,
 * out of range, not a number). Exact: no floating point is involved. */
TW__API bool tw_int64(tw_value v, int64_t *out) {
	if (tw_kind_of(v) != TW_NUMBER) return false;
	const uint8_t *p = v.p, *e = tw__skip_number(v.p, v.end);
	if (!e) return false;
	bool neg = *p == '-';
	if (neg) p++;
	/* The significant digits (leading zeros dropped, trailing zeros counted
	 * in nzero until a nonzero digit follows them) and the power of ten
	 * that scales them. */
	uint32_t ndig = 0, nzero = 0;
	int64_t exp10 = 0;
	uint64_t mant = 0;
	bool frac = false;
	for (; p < e && *p != 'e' && *p != 'E'; p++) {
		if (*p == '.') {
			frac = true;
			continue;
		}
		if (frac) exp10--;
		if (*p == '0' && ndig == 0) continue;
		if (*p == '0') {
			nzero++;
			continue;
		}
		/* A nonzero digit: the zeros before it are significant. */
		for (; nzero; nzero--) {
			if (mant > UINT64_MAX / 10) return false;
			mant *= 10;
			ndig++;
		}
		if (mant > (UINT64_MAX - 9) / 10) return false;
		mant = mant * 10 + (uint64_t)(*p - '0');
		ndig++;
	}
	exp10 += nzero; /* trailing zeros scale instead */
	if (p < e) {
		p++;
		bool eneg = *p == '-';
		if (*p == '+' || *p == '-') p++;
		int64_t x = 0;
		for (; p < e; p++)
			if (x < 100000) x = x * 10 + (*p - '0');
		exp10 += eneg ? -x : x;
	}
	if (mant == 0) {
		*out = 0;
		return true;
	}
	for (; exp10 < 0; exp10++) {
		if (mant % 10) return false;
		mant /= 10;
	}
	for (; exp10 > 0; exp10--) {
		if (mant > UINT64_MAX / 10) return false;
		mant *= 10;
	}
	if (neg ? mant > (uint64_t)1 << 63 : mant >= (uint64_t)1 << 63) return false;
	*out = neg ? (int64_t)(0 - mant) : (int64_t)mant;
	return true;
}

/* tw_number reads a number as a double; false for anything else, or a
 * magnitude past the largest double. Correctly rounded (as Go's
 * strconv.ParseFloat) when the number has at most 15 significant digits
 * and a decimal exponent within +-22 after them, which covers the numbers a
 * policy compares against; otherwise within a few units in the last place. */
TW__API bool tw_number(tw_value v, double *out) {
	static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	if (tw_kind_of(v) != TW_NUMBER) return false;
	const uint8_t *p = v.p, *e = tw__skip_number(v.p, v.end);
	if (!e) return false;
	bool neg = *p == '-';
	if (neg) p++;
	uint64_t mant = 0;
	uint32_t ndig = 0;
	int64_t exp10 = 0;
	bool frac = false;
	for (; p < e && *p != 'e' && *p != 'E'; p++) {
		if (*p == '.') {
			frac = true;
			continue;
		}
		if (ndig == 0 && *p == '0') {
			if (frac) exp10--;
			continue;
		}
		if (ndig < 19) {
			mant = mant * 10 + (uint64_t)(*p - '0');
			ndig++;
			if (frac) exp10--;
		} else if (!frac) {
			exp10++; /* a digit past 19 significant ones only scales */
		}
	}
	if (p < e) {
		p++;
		bool eneg = *p == '-';
		if (*p == '+' || *p == '-') p++;
		int64_t x = 0;
		for (; p < e; p++)
			if (x < 100000) x = x * 10 + (*p - '0');
		exp10 += eneg ? -x : x;
	}
	double d = (double)mant;
	if (mant == 0) {
		d = 0;
	} else if (mant < (uint64_t)1 << 53 && exp10 >= -22 && exp10 <= 22) {
		/* Both operands are exact, so the one rounding is IEEE's. */
		d = exp10 < 0 ? d / pow10[-exp10] : d * pow10[exp10];
	} else {
		if (exp10 > 400) exp10 = 400;
		if (exp10 < -400) exp10 = -400;
		for (; exp10 >= 22; exp10 -= 22) d *= 1e22;
		for (; exp10 <= -22 && d != 0; exp10 += 22) d /= 1e22;
		if (exp10 < 0 && exp10 > -22) d /= pow10[-exp10];
		if (exp10 > 0) d *= pow10[exp10];
	}
	if (d > 1.7976931348623157e308) return false;
	*out = neg ? -d : d;
	return true;
}

/* ------------------------------------------------------------------ */
/* Shell words                                                          */

/* tw_split_words splits a command line into words as POSIX sh splits a
 * simple command, without expanding anything (the rules of the Go kit's
 * SplitWords; vectors in pdk/testdata/shellwords.json):
 *   - words are separated by unquoted spaces and tabs;
 *   - '...' keeps everything up to the next ' as is;
 *   - "..." keeps everything up to the next unescaped ", where a backslash
 *     escapes only $ ` " \ and newline (and is otherwise kept);
 *   - an unquoted backslash escapes the next byte;
 *   - backslash-newline is removed (a line continuation), quoted or not;
 *   - an unquoted # at the start of a word starts a comment to the line's end;
 *   - $, `, ~, * and the like are kept as written.
 * It refuses what sh would not run as one simple command: an unquoted
 * | & ; < > ( ) and a newline followed by anything but blanks; also an
 * unterminated quote and a trailing backslash. On success *words is an
 * arena array of *n words; on refusal *error says why and where. */
TW__API bool tw_split_words(tw_str line, tw_str **words, uint32_t *n, tw_str *error) {
	const uint8_t *s = (const uint8_t *)line.ptr;
	uint32_t len = line.len;
	tw_buf word = {0, 0, 0}, list = {0, 0, 0};
	bool in_word = false;
	uint32_t count = 0;
	const char *why = 0;
	uint32_t at = 0;
#define TW__END_WORD()                                                                  \
	do {                                                                            \
		if (in_word) {                                                          \
			tw_str w = {word.len ? word.ptr : "", word.len};                     \
			tw_buf_add(&list, &w, sizeof w);                                      \
			count++;                                                        \
			word = (tw_buf){0, 0, 0};                                             \
			in_word = false;                                                \
		}                                                                       \
	} while (0)
	for (uint32_t i = 0; i < len && !why; i++) {
		uint8_t c = s[i];
		if (c == '#' && !in_word) {
			/* a comment, up to the newline */
			while (i + 1 < len && s[i + 1] != '\n') i++;
			continue;
		}
		switch (c) {
		case ' ':
		case '\t':
			TW__END_WORD();
			break;
		case '\n':
			TW__END_WORD();
			for (uint32_t j = i + 1; j < len; j++)
				if (s[j] != ' ' && s[j] != '\t' && s[j] != '\n') {
					why = "newline: the line holds more than one command";
					at = i;
					break;
				}
			i = len;
			break;
		case '|':
		case '&':
		case ';':
		case '<':
		case '>':
		case '(':
		case ')':
			why = "unquoted | & ; < > ( or ): the line is not a simple command (quote it to mean the character)";
			at = i;
			break;
		case '\\':
			if (i + 1 == len) {
				why = "trailing backslash";
				at = i;
				break;
			}
			i++;
			if (s[i] != '\n') {
				tw_buf_add(&word, &s[i], 1);
				in_word = true;
			}
			break;
		case '\'': {
			uint32_t j = i + 1;
			while (j < len && s[j] != '\'') j++;
			if (j == len) {
				why = "unterminated single quote";
				at = i;
				break;
			}
			tw_buf_add(&word, s + i + 1, j - i - 1);
			in_word = true;
			i = j;
			break;
		}
		case '"': {
			uint32_t start = i;
			for (i++;; i++) {
				if (i == len) {
					why = "unterminated double quote";
					at = start;
					break;
				}
				uint8_t d = s[i];
				if (d == '"') break;
				if (d == '\\' && i + 1 < len) {
					uint8_t x = s[i + 1];
					if (x == '$' || x == '`' || x == '"' || x == '\\') {
						d = x;
						i++;
					} else if (x == '\n') {
						i++;
						continue;
					}
				}
				tw_buf_add(&word, &d, 1);
			}
			in_word = true;
			break;
		}
		default:
			tw_buf_add(&word, &c, 1);
			in_word = true;
		}
	}
	if (why) {
		if (error) {
			tw_buf b = {0, 0, 0};
			tw_buf_cstr(&b, "shell words: ");
			tw_buf_cstr(&b, why);
			tw_buf_cstr(&b, " (at byte ");
			char digits[10];
			int k = 10;
			do digits[--k] = (char)('0' + at % 10);
			while ((at /= 10) != 0);
			tw_buf_add(&b, digits + k, (uint32_t)(10 - k));
			tw_buf_byte(&b, ')');
			*error = tw_buf_done(&b);
		}
		return false;
	}
	TW__END_WORD();
#undef TW__END_WORD
	*words = (tw_str *)list.ptr;
	*n = count;
	return true;
}

/* ------------------------------------------------------------------ */
/* Regular expressions                                                  */

/* tw_regex_compile compiles a pattern in Go's RE2 syntax with the host's own
 * regexp (the optional imports of pdk/ABI.md section 16), so a pattern is
 * accepted, refused and matched exactly as a Go plugin's regexp.Compile
 * would: all of Go's syntax, Unicode classes and case folding included. It
 * returns NULL and sets *error (Go's text where Go refuses the pattern:
 * "error parsing regexp: missing closing ): `(a`", or the host bound it
 * broke) when the pattern is refused.
 *
 * Compile in configure: the host keeps a compiled pattern for the life of
 * the instance and holds at most 256 per instance (patterns of at most 4096
 * bytes, programs of at most 65536 instructions). Compiling works only
 * during an event (configure runs in one).
 *
 * tw_regex_match answers whether the pattern matches anywhere in text, in
 * time linear in text, reading it as UTF-8 as Go does (an invalid byte is
 * U+FFFD). A plugin that never calls these imports nothing for them. */
typedef struct tw_regex tw_regex;

struct tw_regex {
	int32_t handle;
};

__attribute__((import_module("toolwarden"), import_name("regex_compile")))
int32_t tw__regex_compile(const void *ptr, uint32_t len);
__attribute__((import_module("toolwarden"), import_name("regex_match")))
int32_t tw__regex_match(int32_t handle, const void *ptr, uint32_t len);
__attribute__((import_module("toolwarden"), import_name("regex_error")))
uint32_t tw__regex_error(void *dst, uint32_t cap);

TW__API tw_regex *tw_regex_compile(tw_str pattern, tw_str *error) {
	int32_t h = tw__regex_compile(pattern.ptr, pattern.len);
	if (h > 0) {
		tw_regex *re = tw_alloc(sizeof *re);
		re->handle = h;
		return re;
	}
	if (error) {
		uint32_t n = tw__regex_error(0, 0);
		char *text = tw_alloc(n + 1);
		uint32_t got = tw__regex_error(text, n);
		if (got < n) n = got;
		*error = n ? (tw_str){text, n} : TW_STR("regex_compile: refused (called outside an event?)");
	}
	return NULL;
}

/* A handle the host does not know (compiled on another instance) traps:
 * the event fails closed. */
TW__API bool tw_regex_match(const tw_regex *re, tw_str text) {
	if (!re) return false;
	int32_t m = tw__regex_match(re->handle, text.ptr, text.len);
	if (m < 0) {
		static const char msg[] = "toolwarden.h: regex_match: the host does not know this pattern";
		tw__log(TW_ERROR, msg, sizeof msg - 1);
		__builtin_trap();
	}
	return m == 1;
}

/* ------------------------------------------------------------------ */
/* Session state (pdk/ABI.md section 12)                                */

/* A plugin defined with .state = true gets its per-session counters and
 * entries in every check and observe, and may change them; the host keeps
 * them in its session (they outlive any instance) and applies a check's
 * changes before the next check of the same session runs the plugin:
 *
 *	static tw_verdict check(const tw_event *ev) {
 *		if (tw_state_counter(ev, TW_STR("calls")) >= 2)
 *			return tw_ask("budget_spent", TW_STR("2 calls already ran in this session"));
 *		tw_state_add(TW_STR("calls"), 1);
 *		return tw_abstain();
 *	}
 *
 * Bounds per plugin per session: 64 keys, keys of 1-256 bytes, values of at
 * most 1024 bytes; an update over one fails the event (on_error applies). */

static tw_buf tw__st_add, tw__st_set, tw__st_del;

/* tw_state_counter returns counter key, 0 when it does not exist. */
TW__API int64_t tw_state_counter(const tw_event *ev, tw_str key) {
	int64_t n = 0;
	if (!tw_int64(tw_get_str(tw_get(tw_get(ev->input, "state"), "counters"), key), &n)) return 0;
	return n;
}

/* tw_state_entry sets *out to entry key; false when it does not exist. */
TW__API bool tw_state_entry(const tw_event *ev, tw_str key, tw_str *out) {
	return tw_string(tw_get_str(tw_get(tw_get(ev->input, "state"), "entries"), key), out);
}

static void tw__st_i64(tw_buf *b, int64_t n) {
	char d[24];
	int i = 24;
	uint64_t u = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
	do d[--i] = (char)('0' + u % 10); while ((u /= 10) != 0);
	if (n < 0) d[--i] = '-';
	tw_buf_add(b, d + i, (uint32_t)(24 - i));
}

/* tw_state_add adds n (may be negative) to counter key; a counter that does
 * not exist starts at 0. Add once per key per event: a JSON key given twice
 * counts once (the last). */
TW__API void tw_state_add(tw_str key, int64_t n) {
	if (tw__st_add.len) tw_buf_byte(&tw__st_add, ',');
	tw__json_string(&tw__st_add, key);
	tw_buf_byte(&tw__st_add, ':');
	tw__st_i64(&tw__st_add, n);
}

/* tw_state_set sets entry key to value. */
TW__API void tw_state_set(tw_str key, tw_str value) {
	if (tw__st_set.len) tw_buf_byte(&tw__st_set, ',');
	tw__json_string(&tw__st_set, key);
	tw_buf_byte(&tw__st_set, ':');
	tw__json_string(&tw__st_set, value);
}

/* tw_state_delete removes counter or entry key (a counter so reset starts
 * again at 0). Deletes apply before adds and sets. */
TW__API void tw_state_delete(tw_str key) {
	if (tw__st_del.len) tw_buf_byte(&tw__st_del, ',');
	tw__json_string(&tw__st_del, key);
}

/* tw__state_begin forgets the previous event's changes (their memory was
 * the arena's). */
static void tw__state_begin(void) {
	tw__st_add = (tw_buf){0};
	tw__st_set = (tw_buf){0};
	tw__st_del = (tw_buf){0};
}

/* tw__state_member adds member to the JSON object in out, or makes out an
 * object of it when out is empty. */
static void tw__state_member(tw_buf *out, const char *member, const tw_buf *body, const char *end) {
	if (out->len && out->ptr[out->len - 1] == '}') {
		out->len--;
		if (out->len && out->ptr[out->len - 1] != '{') tw_buf_byte(out, ',');
	} else {
		tw_buf_byte(out, '{');
	}
	tw_buf_cstr(out, member);
	if (body) tw_buf_str(out, tw_buf_done(body));
	tw_buf_cstr(out, end);
}

/* tw__state_end asks for state in describe and sends the event's changes
 * with a check or observe output. */
static void tw__state_end(bool stateful, uint32_t event, uint32_t code, tw_buf *out) {
	if (!stateful || code != TW_OK) return;
	if (event == TW_EVENT_DESCRIBE) {
		tw__state_member(out, "\"state\":true", 0, "}");
		return;
	}
	if (event != TW_EVENT_CHECK && event != TW_EVENT_OBSERVE) return;
	if (!tw__st_add.len && !tw__st_set.len && !tw__st_del.len) return;
	tw_buf b = {0};
	int n = 0;
	if (tw__st_add.len) { tw_buf_cstr(&b, "\"add\":{"); tw_buf_str(&b, tw_buf_done(&tw__st_add)); tw_buf_byte(&b, '}'); n++; }
	if (tw__st_set.len) { if (n++) tw_buf_byte(&b, ','); tw_buf_cstr(&b, "\"set\":{"); tw_buf_str(&b, tw_buf_done(&tw__st_set)); tw_buf_byte(&b, '}'); }
	if (tw__st_del.len) { if (n++) tw_buf_byte(&b, ','); tw_buf_cstr(&b, "\"delete\":["); tw_buf_str(&b, tw_buf_done(&tw__st_del)); tw_buf_byte(&b, ']'); }
	tw__state_member(out, "\"state\":{", &b, "}}");
}

/* TOOLWARDEN_PLUGIN(.name = ..., .version = ..., .configure = ..., .check =
 * ..., .observe = ..., .list = ...) defines the plugin's exports. Use it
 * once, at file scope. */
#define TOOLWARDEN_PLUGIN(...)                                                                   \
	static const tw_plugin tw__the_plugin = {__VA_ARGS__};                                   \
	__attribute__((export_name("toolwarden_abi_v1"))) void toolwarden_abi_v1(void) {}        \
	__attribute__((export_name("toolwarden_handle"))) uint32_t toolwarden_handle(uint32_t event, \
	                                                                             uint32_t input_len) { \
		return tw__run(&tw__the_plugin, event, input_len);                                \
	}

#endif /* TOOLWARDEN_H */
