/*
 * The anchor guest of the guest benchmarks (../../bench_guest_test.go): a
 * freestanding C guest (no libc, no allocator, one static input buffer)
 * that runs the minimal scanner of the plugin performance anchors
 * (docs/performance.md, "Guest cost") over whatever input it gets, through
 * toolwarden's ABI v1. Its scan is kept exactly as the anchor measured it:
 * one pass over the root object, descending into "annotations", "app" and
 * "session", skipping every other value byte by byte. It answers a check
 * with the anchor's rule; the benchmarks compare plugins with it on the
 * same envelope bytes.
 *
 * Built by the benchmarks with clang, as the anchor was:
 *   clang --target=wasm32 -O2 -nostdlib -Wl,--no-entry -Wl,--strip-all -o anchor.wasm anchor.c
 */
typedef unsigned int u32;
typedef unsigned long long u64;

#define IN_CAP 65536
static unsigned char inbuf[IN_CAP];
static unsigned char outbuf[128];

enum { P_ROOT, P_ANN, P_APP, P_SES, P_OTHER };

typedef struct {
  int ro, destr, ow, destr_en, ow_en, taint;
} facts;

typedef struct {
  const unsigned char *b;
  u32 n, i;
} scanner;

static int eqn(const unsigned char *a, u32 n, const char *lit, u32 ln) {
  if (n != ln) return 0;
  for (u32 k = 0; k < n; k++)
    if ((unsigned char)lit[k] != a[k]) return 0;
  return 1;
}
#define eq(a, n, lit) eqn((a), (n), (lit), sizeof(lit) - 1)

static void ws(scanner *s) {
  while (s->i < s->n) {
    unsigned char c = s->b[s->i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') s->i++;
    else return;
  }
}

static int str(scanner *s, u32 *start, u32 *len) {
  if (s->i >= s->n || s->b[s->i] != '"') return 0;
  s->i++;
  u32 st = s->i;
  while (s->i < s->n) {
    unsigned char c = s->b[s->i];
    if (c == '\\') { s->i += 2; continue; }
    if (c == '"') { *start = st; *len = s->i - st; s->i++; return 1; }
    s->i++;
  }
  return 0;
}

static int lit(scanner *s, const char *w) {
  u32 k = 0;
  for (; w[k]; k++) {
    if (s->i + k >= s->n || s->b[s->i + k] != (unsigned char)w[k]) return 0;
  }
  s->i += k;
  return 1;
}

static int skip(scanner *s) {
  if (s->i >= s->n) return 0;
  unsigned char c = s->b[s->i];
  u32 a, l;
  if (c == '"') return str(s, &a, &l);
  if (c == '{' || c == '[') {
    int depth = 0;
    while (s->i < s->n) {
      unsigned char d = s->b[s->i];
      if (d == '"') { if (!str(s, &a, &l)) return 0; continue; }
      if (d == '{' || d == '[') depth++;
      else if (d == '}' || d == ']') {
        depth--;
        if (depth == 0) { s->i++; return 1; }
      }
      s->i++;
    }
    return 0;
  }
  if (c == 't') return lit(s, "true");
  if (c == 'f') return lit(s, "false");
  if (c == 'n') return lit(s, "null");
  u32 st = s->i;
  while (s->i < s->n) {
    unsigned char d = s->b[s->i];
    if (d == '-' || d == '+' || d == '.' || d == 'e' || d == 'E' || (d >= '0' && d <= '9')) s->i++;
    else break;
  }
  return s->i > st;
}

static int object(scanner *s, int parent, facts *f) {
  ws(s);
  if (s->i >= s->n || s->b[s->i] != '{') return 0;
  s->i++;
  ws(s);
  if (s->i < s->n && s->b[s->i] == '}') { s->i++; return 1; }
  for (;;) {
    u32 ks, kl;
    ws(s);
    if (!str(s, &ks, &kl)) return 0;
    const unsigned char *k = s->b + ks;
    ws(s);
    if (s->i >= s->n || s->b[s->i] != ':') return 0;
    s->i++;
    ws(s);
    int *field = 0;
    int child = P_OTHER;
    switch (parent) {
    case P_ROOT:
      if (eq(k, kl, "annotations")) child = P_ANN;
      else if (eq(k, kl, "app")) child = P_APP;
      else if (eq(k, kl, "session")) child = P_SES;
      break;
    case P_ANN:
      if (eq(k, kl, "readOnlyHint")) field = &f->ro;
      else if (eq(k, kl, "destructiveHint")) field = &f->destr;
      else if (eq(k, kl, "openWorldHint")) field = &f->ow;
      break;
    case P_APP:
      if (eq(k, kl, "destructive_enabled")) field = &f->destr_en;
      else if (eq(k, kl, "open_world_enabled")) field = &f->ow_en;
      break;
    case P_SES:
      if (eq(k, kl, "tainted")) field = &f->taint;
      break;
    }
    if (child != P_OTHER && s->i < s->n && s->b[s->i] == '{') {
      if (!object(s, child, f)) return 0;
    } else if (field) {
      if (s->i < s->n && s->b[s->i] == 't' && lit(s, "true")) *field = 1;
      else if (s->i < s->n && s->b[s->i] == 'f' && lit(s, "false")) *field = 0;
      else if (!skip(s)) return 0;
    } else {
      if (!skip(s)) return 0;
    }
    ws(s);
    if (s->i >= s->n) return 0;
    if (s->b[s->i] == ',') { s->i++; continue; }
    if (s->b[s->i] == '}') { s->i++; return 1; }
    return 0;
  }
}

// decide: 0 = ok, fills verdict strings. Shared by the wasm exports and the
// native harness (bench_native.c).
static void decide(const unsigned char *b, u32 n, const char **dec, const char **why) {
  facts f = {0, 1, 1, 0, 0, 0};
  scanner s = {b, n, 0};
  if (!object(&s, P_ROOT, &f)) {
    *dec = "deny"; *why = "bad_input";
  } else if (!f.destr_en && f.destr) {
    *dec = "deny"; *why = "destructive_disabled";
  } else if (!f.ow_en && f.ow) {
    *dec = "deny"; *why = "open_world_disabled";
  } else if (f.ro && !f.destr) {
    *dec = "allow"; *why = "read_only";
  } else if (f.taint && f.ow) {
    *dec = "ask"; *why = "tainted_open_world";
  } else {
    *dec = "ask"; *why = "default";
  }
}

static u32 put(u32 o, const char *w) {
  while (*w) outbuf[o++] = (unsigned char)*w++;
  return o;
}

static u32 render(const char *dec, const char *why) {
  u32 o = put(0, "{\"decision\":\"");
  o = put(o, dec);
  o = put(o, "\",\"reason\":\"");
  o = put(o, why);
  o = put(o, "\"}");
  return o;
}


__attribute__((import_module("toolwarden"), import_name("input_read"))) u32 input_read(unsigned char *dst, u32 len);
__attribute__((import_module("toolwarden"), import_name("output_write"))) u32 output_write(const unsigned char *src, u32 len);

__attribute__((export_name("toolwarden_abi_v1"))) void toolwarden_abi_v1(void) {}

static const char describe[] = "{\"name\":\"anchor\",\"version\":\"1.0.0\",\"events\":[\"check\"]}";

__attribute__((export_name("toolwarden_handle"))) u32 toolwarden_handle(u32 event, u32 input_len) {
  if (event == 0) {
    output_write((const unsigned char *)describe, sizeof(describe) - 1);
    return 0;
  }
  if (event != 2) return 1;
  if (input_len > IN_CAP) return 2;
  u32 n = 0;
  while (n < input_len) {
    u32 got = input_read(inbuf + n, input_len - n);
    if (got == 0) break;
    n += got;
  }
  const char *dec, *why;
  decide(inbuf, n, &dec, &why);
  output_write(outbuf, render(dec, why));
  return 0;
}
