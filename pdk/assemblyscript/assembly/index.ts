// The AssemblyScript plugin development kit for toolwarden policy plugins
// (ABI v1, pdk/ABI.md). README.md has the whole story; in short:
//
//   import { Event, Plugin, Verdict, register } from "@toolwarden/pdk";
//   export { toolwarden_abi_v1, toolwarden_handle } from "@toolwarden/pdk";
//
//   function check(ev: Event): Verdict {
//     const cmd = ev.arguments().get("command").str();
//     if (cmd !== null && cmd.includes("sudo ")) return Verdict.ask("sudo", "the command runs sudo");
//     return Verdict.abstain();
//   }
//
//   register(new Plugin("no-sudo", "1.0.0").onCheck(check));
//
//   asc assembly/index.ts -o no-sudo.wasm -O3 --noAssert \
//     --runtime node_modules/@toolwarden/pdk/assembly/runtime \
//     --use abort=~lib/@toolwarden/pdk/assembly/index/toolwardenAbort
//
// What it gives you:
//   - the ABI glue: the exports (re-export them from your entry file, as
//     above), the host imports, reading the input and writing the output;
//   - a lazy JSON reader (Value): get() scans an object only up to the key
//     it looks for, and values are validated as they are scanned;
//   - typed verdicts (Verdict) and a JSON writer for them;
//   - toolwardenAbort, which logs an abort's message to the host and traps
//     (the host refuses the default env.abort import);
//   - an arena runtime (assembly/runtime.ts): every event's allocations are
//     freed in one step when it returns. With it, globals may only hold
//     objects created at the top level or in configure, and those must not
//     be modified while handling events. Without it (the default
//     incremental runtime) there is no such rule, at some cost in speed.

// ---------------------------------------------------------------- imports

@external("toolwarden", "input_read")
declare function input_read(dst: usize, len: u32): u32;
@external("toolwarden", "output_write")
declare function output_write(src: usize, len: u32): u32;
@external("toolwarden", "log")
declare function host_log(level: u32, ptr: usize, len: u32): void;

// ---------------------------------------------------------------- ABI constants

export const EVENT_DESCRIBE: u32 = 0;
export const EVENT_LIST: u32 = 1;
export const EVENT_CHECK: u32 = 2;
export const EVENT_OBSERVE: u32 = 3;
/** The policy's data file, once per instance (ABI section 13). */
export const EVENT_INIT: u32 = 4;

export const OK: u32 = 0;
export const NOT_HANDLED: u32 = 1;
export const BAD_INPUT: u32 = 2;
export const INTERNAL: u32 = 3;
export const BAD_CONFIG: u32 = 4;

export enum Level { Debug = 0, Info = 1, Warn = 2, Error = 3 }

/** Writes a message to the host's log (capped by the host). */
export function log(level: Level, msg: string): void {
  const b = String.UTF8.encode(msg);
  host_log(<u32>level, changetype<usize>(b), <u32>b.byteLength);
}

/** The abort handler: logs the message and where, then traps. Build with
 * --use abort=<pdk>/assembly/index/toolwardenAbort. */
export function toolwardenAbort(message: string | null = null, fileName: string | null = null, line: u32 = 0, column: u32 = 0): void {
  let m = message !== null ? message : "abort";
  if (fileName !== null) m += " at " + fileName + ":" + line.toString() + ":" + column.toString();
  log(Level.Error, m);
  unreachable();
}

// ---------------------------------------------------------------- reading JSON

/** The deepest nesting of arrays and objects a scan accepts. */
export const MAX_DEPTH: i32 = 256;

export enum Kind { Missing, Null, Bool, Number, String, Array, Object }

// @ts-ignore: decorator
@inline function isWS(c: u32): bool { return c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D; }

// ws skips white space. The host sends none, so the common case does not
// enter a loop (every loop iteration also runs the host's deadline check).
// @ts-ignore: decorator
@inline function ws(p: usize, e: usize): usize {
  return p < e && <u32>load<u8>(p) <= 0x20 ? wsLoop(p, e) : p;
}

function wsLoop(p: usize, e: usize): usize {
  while (p < e && isWS(<u32>load<u8>(p))) p++;
  return p;
}

function hex(c: u32): i32 {
  if (c >= 0x30 && c <= 0x39) return <i32>c - 0x30;
  if (c >= 0x61 && c <= 0x66) return <i32>c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return <i32>c - 0x41 + 10;
  return -1;
}

// hex4 reads four hex digits at p (the caller checked p+4 <= end); -1 if not hex.
function hex4(p: usize): i32 {
  const a = hex(<u32>load<u8>(p)), b = hex(<u32>load<u8>(p + 1)), c = hex(<u32>load<u8>(p + 2)), d = hex(<u32>load<u8>(p + 3));
  if ((a | b | c | d) < 0) return -1;
  return a << 12 | b << 8 | c << 4 | d;
}

const LO: u64 = 0x0101010101010101;
const HI: u64 = 0x8080808080808080;

// special has the high bit set in each byte of x that may be '"', '\\' or
// below 0x20; the lowest set byte is always exact.
// @ts-ignore: decorator
@inline function special(x: u64): u64 {
  const q = x ^ (LO * 0x22), b = x ^ (LO * 0x5C);
  return (((q - LO) & ~q) | ((b - LO) & ~b) | ((x - LO * 0x20) & ~x)) & HI;
}

// Set by skipString: whether the last string skipped had an escape.
let lastEscaped = false;

// skipString skips the string at p (a '"'); 0 if malformed. One loop, 8
// bytes a step.
function skipString(p: usize, e: usize): usize {
  lastEscaped = false;
  p++;
  while (true) {
    if (e - p >= 8) {
      const m = special(load<u64>(p));
      if (!m) { p += 8; continue; }
      p += <usize>(ctz(m) >> 3);
    } else if (p >= e) {
      return 0;
    } else {
      const c = <u32>load<u8>(p);
      if (c != 0x22 && c != 0x5C && c >= 0x20) { p++; continue; }
    }
    const c = <u32>load<u8>(p);
    if (c == 0x22) return p + 1;
    if (c < 0x20) return 0;
    // a backslash
    lastEscaped = true;
    if (e - p < 2) return 0;
    const d = <u32>load<u8>(p + 1);
    if (d == 0x75) { // u
      if (e - p < 6 || hex4(p + 2) < 0) return 0;
      p += 6;
    } else if (d == 0x22 || d == 0x5C || d == 0x2F || d == 0x62 || d == 0x66 || d == 0x6E || d == 0x72 || d == 0x74) {
      p += 2;
    } else {
      return 0;
    }
  }
  return 0;
}

// @ts-ignore: decorator
@inline function isDigit(p: usize, e: usize): bool {
  if (p >= e) return false;
  const c = <u32>load<u8>(p);
  return c >= 0x30 && c <= 0x39;
}

function skipNumber(p: usize, e: usize): usize {
  if (p < e && load<u8>(p) == 0x2D) p++;
  if (p < e && load<u8>(p) == 0x30) {
    p++;
  } else if (isDigit(p, e)) {
    while (isDigit(p, e)) p++;
  } else {
    return 0;
  }
  if (p < e && load<u8>(p) == 0x2E) {
    const d = ++p;
    while (isDigit(p, e)) p++;
    if (p == d) return 0;
  }
  if (p < e && (load<u8>(p) | 0x20) == 0x65) {
    p++;
    if (p < e && (load<u8>(p) == 0x2B || load<u8>(p) == 0x2D)) p++;
    const d = p;
    while (isDigit(p, e)) p++;
    if (p == d) return 0;
  }
  return p;
}

// literal matches true, false or null at p; 0 if it does not.
function literal(p: usize, e: usize, word: u64, n: usize): usize {
  if (e - p < n) return 0;
  if (<u64>load<u32>(p) != (word & 0xFFFFFFFF)) return 0;
  if (n == 5 && <u64>load<u8>(p + 4) != (word >> 32)) return 0;
  return p + n;
}
const TRUE: u64 = 0x65757274; // "true", little-endian
const FALSE: u64 = 0x65736C6166; // "false"
const NULL: u64 = 0x6C6C756E; // "null"

// The stack of open containers of skip: 1 = object, 0 = array.
const stack = new StaticArray<u8>(MAX_DEPTH + 1);

// skip validates and skips the value at p; 0 if malformed or nested deeper
// than MAX_DEPTH. It keeps its own stack: a deep input cannot blow the
// wasm stack.
function skip(p: usize, e: usize): usize {
  let depth = 0;
  // state: 0 = at a value, 1 = after a value, 2 = at a key
  let state = 0;
  while (true) {
    if (state == 0) {
      if (p >= e) return 0;
      const c = <u32>load<u8>(p);
      if (c == 0x7B || c == 0x5B) { // { [
        if (++depth > MAX_DEPTH) return 0;
        const obj = c == 0x7B;
        unchecked(stack[depth] = obj ? 1 : 0);
        p = ws(p + 1, e);
        if (p < e && <u32>load<u8>(p) == (obj ? 0x7D : 0x5D)) {
          p++;
          depth--;
          state = 1;
        } else {
          state = obj ? 2 : 0;
        }
        continue;
      }
      if (c == 0x22) p = skipString(p, e);
      else if (c == 0x74) p = literal(p, e, TRUE, 4);
      else if (c == 0x66) p = literal(p, e, FALSE, 5);
      else if (c == 0x6E) p = literal(p, e, NULL, 4);
      else p = skipNumber(p, e);
      if (!p) return 0;
      state = 1;
    } else if (state == 1) {
      if (depth == 0) return p;
      p = ws(p, e);
      if (p >= e) return 0;
      const c = <u32>load<u8>(p);
      const obj = unchecked(stack[depth]) == 1;
      if (c == 0x2C) {
        p = ws(p + 1, e);
        state = obj ? 2 : 0;
      } else if (c == (obj ? 0x7D : 0x5D)) {
        p++;
        depth--;
      } else {
        return 0;
      }
    } else {
      if (p >= e || load<u8>(p) != 0x22) return 0;
      p = skipString(p, e);
      if (!p) return 0;
      p = ws(p, e);
      if (p >= e || load<u8>(p) != 0x3A) return 0;
      p = ws(p + 1, e);
      state = 0;
    }
  }
  return 0;
}

// A growable byte buffer (UTF-8).
class Bytes {
  buf: ArrayBuffer;
  len: i32 = 0;
  constructor(cap: i32 = 64) { this.buf = new ArrayBuffer(max(cap, 16)); }
  reserve(n: i32): void {
    if (this.buf.byteLength - this.len >= n) return;
    const nb = new ArrayBuffer(max(this.buf.byteLength * 2, this.len + n));
    memory.copy(changetype<usize>(nb), changetype<usize>(this.buf), this.len);
    this.buf = nb;
  }
  byte(c: u32): void {
    this.reserve(1);
    store<u8>(changetype<usize>(this.buf) + this.len, c);
    this.len++;
  }
  raw(p: usize, n: i32): void {
    this.reserve(n);
    memory.copy(changetype<usize>(this.buf) + this.len, p, n);
    this.len += n;
  }
  ascii(s: string): void {
    const n = s.length;
    this.reserve(n);
    const d = changetype<usize>(this.buf) + this.len;
    for (let i = 0; i < n; i++) store<u8>(d + i, s.charCodeAt(i));
    this.len += n;
  }
  rune(r: u32): void {
    if (r < 0x80) this.byte(r);
    else if (r < 0x800) { this.byte(0xC0 | r >> 6); this.byte(0x80 | (r & 0x3F)); }
    else if (r < 0x10000) { this.byte(0xE0 | r >> 12); this.byte(0x80 | (r >> 6 & 0x3F)); this.byte(0x80 | (r & 0x3F)); }
    else { this.byte(0xF0 | r >> 18); this.byte(0x80 | (r >> 12 & 0x3F)); this.byte(0x80 | (r >> 6 & 0x3F)); this.byte(0x80 | (r & 0x3F)); }
  }
  get ptr(): usize { return changetype<usize>(this.buf); }
}

// decode decodes a validated string body with escapes into UTF-8. A
// surrogate that is not part of a pair becomes U+FFFD.
function decode(s: usize, e: usize): Bytes {
  const out = new Bytes(<i32>(e - s));
  while (s < e) {
    const run = s;
    while (s < e && load<u8>(s) != 0x5C) s++;
    out.raw(run, <i32>(s - run));
    if (s >= e) break;
    const c = <u32>load<u8>(s + 1);
    s += 2;
    if (c == 0x75) {
      let r = <u32>hex4(s);
      s += 4;
      if (r >= 0xD800 && r < 0xE000) {
        if (r < 0xDC00 && e - s >= 6 && load<u8>(s) == 0x5C && load<u8>(s + 1) == 0x75) {
          const r2 = hex4(s + 2);
          if (r2 >= 0xDC00 && r2 < 0xE000) {
            r = 0x10000 + ((r - 0xD800) << 10) + (<u32>r2 - 0xDC00);
            s += 6;
          }
        }
        if (r >= 0xD800 && r < 0xE000) r = 0xFFFD;
      }
      out.rune(r);
    } else if (c == 0x62) out.byte(8);
    else if (c == 0x66) out.byte(12);
    else if (c == 0x6E) out.byte(10);
    else if (c == 0x72) out.byte(13);
    else if (c == 0x74) out.byte(9);
    else out.byte(c); // " \ /
  }
  return out;
}

// utf8Len is the length of the valid UTF-8 sequence at s, or 0.
function utf8Len(s: usize, e: usize): i32 {
  const c = <u32>load<u8>(s);
  let n = 0;
  let lo: u32 = 0x80, hi: u32 = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) { n = 3; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
  else if (c >= 0xF0 && c <= 0xF4) { n = 4; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
  else return 0;
  if (e - s < <usize>n) return 0;
  const c1 = <u32>load<u8>(s + 1);
  if (c1 < lo || c1 > hi) return 0;
  for (let i = 2; i < n; i++) {
    const ci = <u32>load<u8>(s + i);
    if (ci < 0x80 || ci > 0xBF) return 0;
  }
  return n;
}

// toString decodes UTF-8 into a string; invalid bytes become U+FFFD.
function toString(s: usize, e: usize): string {
  const n = <i32>(e - s);
  const out = changetype<string>(__new(<usize>n << 1, idof<string>()));
  let o = changetype<usize>(out);
  while (s < e) {
    if (e - s >= 8) { // 8 ASCII bytes a step
      const x = load<u64>(s);
      if (!(x & HI)) {
        store<u16>(o, <u16>(x & 0xFF));
        store<u16>(o, <u16>(x >> 8 & 0xFF), 2);
        store<u16>(o, <u16>(x >> 16 & 0xFF), 4);
        store<u16>(o, <u16>(x >> 24 & 0xFF), 6);
        store<u16>(o, <u16>(x >> 32 & 0xFF), 8);
        store<u16>(o, <u16>(x >> 40 & 0xFF), 10);
        store<u16>(o, <u16>(x >> 48 & 0xFF), 12);
        store<u16>(o, <u16>(x >> 56), 14);
        o += 16;
        s += 8;
        continue;
      }
    }
    const c = <u32>load<u8>(s);
    if (c < 0x80) {
      store<u16>(o, c);
      s++;
    } else {
      const k = utf8Len(s, e);
      let r: u32 = 0xFFFD;
      if (k == 2) r = (c & 0x1F) << 6 | (<u32>load<u8>(s + 1) & 0x3F);
      else if (k == 3) r = (c & 0x0F) << 12 | (<u32>load<u8>(s + 1) & 0x3F) << 6 | (<u32>load<u8>(s + 2) & 0x3F);
      else if (k == 4) r = (c & 0x07) << 18 | (<u32>load<u8>(s + 1) & 0x3F) << 12 | (<u32>load<u8>(s + 2) & 0x3F) << 6 | (<u32>load<u8>(s + 3) & 0x3F);
      s += k > 0 ? <usize>k : 1;
      if (r >= 0x10000) {
        r -= 0x10000;
        store<u16>(o, 0xD800 | r >> 10);
        o += 2;
        store<u16>(o, 0xDC00 | (r & 0x3FF));
      } else {
        store<u16>(o, r);
      }
    }
    o += 2;
  }
  return changetype<string>(__renew(changetype<usize>(out), o - changetype<usize>(out)));
}

// keyEquals reports whether the string at p (a validated key, ending at
// end) equals key, given as UTF-8.
function keyEquals(p: usize, end: usize, escaped: bool, key: Bytes): bool {
  let s = p + 1, n = <i32>(end - 1 - s);
  if (!escaped && n != key.len) return false; // no loop for most members
  if (escaped) {
    const d = decode(s, end - 1);
    s = d.ptr;
    n = d.len;
  }
  if (n != key.len) return false;
  return memory.compare(s, key.ptr, n) == 0;
}

function utf8Of(s: string): Bytes {
  const b = new Bytes(s.length * 3);
  writeUTF8(b, s);
  return b;
}

// writeUTF8 appends s as UTF-8; a lone surrogate becomes U+FFFD.
function writeUTF8(b: Bytes, s: string): void {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    let c = <u32>s.charCodeAt(i);
    if (c < 0x80) { b.byte(c); continue; }
    if (c >= 0xD800 && c < 0xE000) {
      if (c < 0xDC00 && i + 1 < n) {
        const c2 = <u32>s.charCodeAt(i + 1);
        if (c2 >= 0xDC00 && c2 < 0xE000) {
          b.rune(0x10000 + ((c - 0xD800) << 10) + (c2 - 0xDC00));
          i++;
          continue;
        }
      }
      c = 0xFFFD;
    }
    b.rune(c);
  }
}

/** One JSON value of an event's input (or of the config). It points at the
 * value's first byte and at the end of the document: a value is scanned,
 * and validated, only as far as a reader needs. A missing value (p == 0)
 * gives every reader its "not found" answer. */
export class Value {
  constructor(public p: usize, public end: usize) {}

  static missing(): Value { return new Value(0, 0); }

  /** Whether the value is present (null counts as present). */
  exists(): bool { return this.p != 0 && this.p < this.end; }

  /** The value's JSON type, from its first byte. */
  kind(): Kind {
    if (!this.exists()) return Kind.Missing;
    const c = <u32>load<u8>(this.p);
    if (c == 0x6E) return Kind.Null;
    if (c == 0x74 || c == 0x66) return Kind.Bool;
    if (c == 0x22) return Kind.String;
    if (c == 0x5B) return Kind.Array;
    if (c == 0x7B) return Kind.Object;
    return Kind.Number;
  }

  /** Whether the whole value is well-formed JSON (it is scanned). */
  valid(): bool { return this.exists() && skip(this.p, this.end) != 0; }

  /** The value's JSON text, or null if missing or malformed. */
  raw(): string | null {
    if (!this.exists()) return null;
    const e = skip(this.p, this.end);
    return e ? toString(this.p, e) : null;
  }

  /** The first member of an object named key, or a missing value. */
  get(key: string): Value {
    if (this.kind() != Kind.Object) return Value.missing();
    const k = utf8Of(key);
    const it = new Members(this);
    while (it.nextRaw()) {
      if (keyEquals(it.keyStart, it.keyEnd, it.keyEscaped, k)) return it.value;
    }
    return Value.missing();
  }

  /** Element i of an array, or a missing value. */
  index(i: i32): Value {
    const it = new Elements(this);
    for (let n = 0; it.next(); n++) if (n == i) return it.value;
    return Value.missing();
  }

  /** A string's text, escapes decoded; null for any other kind or a
   * malformed string. Invalid UTF-8 becomes U+FFFD. */
  str(): string | null {
    if (this.kind() != Kind.String) return null;
    const e = skipString(this.p, this.end);
    if (!e) return null;
    if (!lastEscaped) return toString(this.p + 1, e - 1);
    const d = decode(this.p + 1, e - 1);
    return toString(d.ptr, d.ptr + d.len);
  }

  /** Whether the value is the literal true. */
  isTrue(): bool { return this.exists() && literal(this.p, this.end, TRUE, 4) != 0; }

  /** A boolean's value, or def when the value is not a boolean. */
  bool(def: bool = false): bool {
    if (!this.exists()) return def;
    if (literal(this.p, this.end, TRUE, 4)) return true;
    if (literal(this.p, this.end, FALSE, 5)) return false;
    return def;
  }

  /** A number's value, or NaN. */
  number(): f64 {
    if (this.kind() != Kind.Number) return NaN;
    const r = this.raw();
    return r === null ? NaN : parseFloat(r);
  }

  /** The members of an object: while (it.next()) { it.key(), it.value }. */
  members(): Members { return new Members(this); }

  /** The elements of an array: while (it.next()) { it.value }. */
  elements(): Elements { return new Elements(this); }
}

// Shared stepping of Members and Elements: moves past the previous value
// and its separator.
class Iter {
  p: usize;
  end: usize;
  val: usize = 0;
  first: bool = true;
  done: bool = false;
  /** Whether the iteration stopped at malformed input. */
  bad: bool = false;
  value: Value = Value.missing();

  constructor(v: Value, open: u32) {
    this.p = v.p + 1;
    this.end = v.end;
    if (!v.exists() || <u32>load<u8>(v.p) != open) this.done = this.bad = true;
  }

  step(close: u32): bool {
    if (this.done) return false;
    let p = this.p;
    const e = this.end;
    if (this.first) {
      this.first = false;
      p = ws(p, e);
      if (p < e && <u32>load<u8>(p) == close) { this.done = true; return false; }
    } else {
      p = skip(this.val, e);
      if (p) p = ws(p, e);
      if (!p || p >= e) return this.fail();
      const c = <u32>load<u8>(p);
      if (c == close) { this.done = true; return false; }
      if (c != 0x2C) return this.fail();
      p++;
    }
    this.p = ws(p, e);
    return true;
  }

  fail(): bool {
    this.done = this.bad = true;
    return false;
  }
}

/** Iterates an object's members. */
export class Members extends Iter {
  keyStart: usize = 0;
  keyEnd: usize = 0;
  keyEscaped: bool = false;

  constructor(v: Value) { super(v, 0x7B); }

  /** Moves to the next member; false at the end (or at malformed input). */
  next(): bool { return this.nextRaw(); }

  /** The current member's name. */
  key(): string {
    if (!this.keyEscaped) return toString(this.keyStart + 1, this.keyEnd - 1);
    const d = decode(this.keyStart + 1, this.keyEnd - 1);
    return toString(d.ptr, d.ptr + d.len);
  }

  nextRaw(): bool {
    if (!this.step(0x7D)) return false;
    const e = this.end;
    let p = this.p;
    if (p >= e || load<u8>(p) != 0x22) return this.fail();
    const k = skipString(p, e);
    if (!k) return this.fail();
    this.keyStart = p;
    this.keyEnd = k;
    this.keyEscaped = lastEscaped;
    p = ws(k, e);
    if (p >= e || load<u8>(p) != 0x3A) return this.fail();
    p = ws(p + 1, e);
    this.val = this.p = p;
    this.value = new Value(p, e);
    return true;
  }
}

/** Iterates an array's elements. */
export class Elements extends Iter {
  constructor(v: Value) { super(v, 0x5B); }

  /** Moves to the next element; false at the end (or at malformed input). */
  next(): bool {
    if (!this.step(0x5D)) return false;
    this.val = this.p;
    this.value = new Value(this.p, this.end);
    return true;
  }
}

// ---------------------------------------------------------------- events

/** One event's input (ABI section 4): a JSON object read lazily. */
export class Event {
  constructor(public kind: u32, public input: Value) {}

  /** A top-level key of the envelope. */
  get(key: string): Value { return this.input.get(key); }
  /** call (check and observe). */
  call(): Value { return this.input.get("call"); }
  /** call.arguments, as the client sent them. */
  arguments(): Value { return this.call().get("arguments"); }
  /** call.tool.name, or "". */
  toolName(): string {
    const s = this.call().get("tool").get("name").str();
    return s !== null ? s : "";
  }
  /** session. */
  session(): Value { return this.input.get("session"); }
  /** Whether the session carries a label. */
  hasLabel(label: string): bool {
    const it = this.session().get("labels").elements();
    while (it.next()) {
      const s = it.value.str();
      if (s !== null && s == label) return true;
    }
    return false;
  }
}

// ---------------------------------------------------------------- verdicts

export enum Decision { Abstain = 0, Allow = 1, Ask = 2, Deny = 3 }

/** The answer to a check (ABI section 5.2), or a failure (Verdict.fail). */
export class Verdict {
  /** A stable machine code, [a-z0-9_.:-]{1,64}; "" means "plugin". */
  code: string = "";
  /** Shown to the human. */
  reason: string = "";
  /** May an approval of this ask be remembered for the session? Leave it
   * false when asking because of arguments: the host remembers approvals
   * per tool, not per argument. */
  remember: bool = false;
  /** Session labels to add. */
  labels: string[] | null = null;
  /** When not 0, the event fails with this ABI code and reason is the message. */
  failCode: u32 = 0;

  constructor(public decision: Decision) {}

  static abstain(): Verdict { return new Verdict(Decision.Abstain); }
  static allow(code: string, reason: string): Verdict { return Verdict.make(Decision.Allow, code, reason); }
  static ask(code: string, reason: string): Verdict { return Verdict.make(Decision.Ask, code, reason); }
  static deny(code: string, reason: string): Verdict { return Verdict.make(Decision.Deny, code, reason); }
  /** Fails the event with an ABI code (e.g. BAD_INPUT) and a message. */
  static fail(code: u32, message: string): Verdict {
    const v = Verdict.make(Decision.Abstain, "", message);
    v.failCode = code;
    return v;
  }

  withRemember(remember: bool): Verdict { this.remember = remember; return this; }
  withLabels(labels: string[]): Verdict { this.labels = labels; return this; }

  private static make(d: Decision, code: string, reason: string): Verdict {
    const v = new Verdict(d);
    v.code = code;
    v.reason = reason;
    return v;
  }
}

/** The labels an observe adds, or the tools a list hides. */
export class Names {
  items: Bytes = new Bytes();
  n: i32 = 0;
  failCode: u32 = 0;
  message: string = "";

  push(name: string): void {
    if (this.n++) this.items.byte(0x2C);
    writeJSONString(this.items, name);
  }
  /** Fails the event with an ABI code and a message. */
  fail(code: u32, message: string): void {
    this.failCode = code;
    this.message = message;
  }
}

const HEX = "0123456789abcdef";

// writeJSONString writes s as a JSON string: quotes, backslashes and
// control characters escaped; a lone surrogate becomes U+FFFD.
function writeJSONString(b: Bytes, s: string): void {
  b.byte(0x22);
  const n = s.length;
  const src = changetype<usize>(s);
  for (let i = 0; i < n; i++) {
    if (n - i >= 4) { // 4 plain ASCII units a step
      const x = load<u64>(src + (<usize>i << 1));
      const q = x ^ 0x0022002200220022, k = x ^ 0x005C005C005C005C;
      const lo: u64 = 0x0001000100010001, hi: u64 = 0x8000800080008000;
      if (!((x & 0xFF80FF80FF80FF80) | ((((q - lo) & ~q) | ((k - lo) & ~k) | ((x - lo * 0x20) & ~x)) & hi))) {
        b.reserve(4);
        const d = b.ptr + b.len;
        store<u8>(d, <u8>x);
        store<u8>(d + 1, <u8>(x >> 16));
        store<u8>(d + 2, <u8>(x >> 32));
        store<u8>(d + 3, <u8>(x >> 48));
        b.len += 4;
        i += 3;
        continue;
      }
    }
    const c = <u32>s.charCodeAt(i);
    if (c >= 0x20 && c != 0x22 && c != 0x5C && c < 0x80) { b.byte(c); continue; }
    if (c >= 0x80) {
      if (c >= 0xD800 && c < 0xDC00 && i + 1 < n) {
        const c2 = <u32>s.charCodeAt(i + 1);
        if (c2 >= 0xDC00 && c2 < 0xE000) {
          b.rune(0x10000 + ((c - 0xD800) << 10) + (c2 - 0xDC00));
          i++;
          continue;
        }
      }
      b.rune(c >= 0xD800 && c < 0xE000 ? 0xFFFD : c);
      continue;
    }
    b.byte(0x5C);
    if (c == 0x22 || c == 0x5C) b.byte(c);
    else if (c == 0x0A) b.byte(0x6E);
    else if (c == 0x09) b.byte(0x74);
    else if (c == 0x0D) b.byte(0x72);
    else {
      b.ascii("u00");
      b.byte(HEX.charCodeAt(c >> 4));
      b.byte(HEX.charCodeAt(c & 15));
    }
  }
  b.byte(0x22);
}

// ---------------------------------------------------------------- the plugin

/** A plugin: its name, version and handlers. Leave a handler unset for an
 * event the plugin does not handle; describe is answered for you. */
export class Plugin {
  configure: ((config: Value) => string | null) | null = null;
  check: ((ev: Event) => Verdict) | null = null;
  observe: ((ev: Event, labels: Names) => void) | null = null;
  list: ((ev: Event, hide: Names) => void) | null = null;
  /** Asks for per-session state (stateCounter, stateAdd, ...). */
  state: bool = false;
  /** Receives the policy's data file (onData). */
  data: ((data: Value) => string | null) | null = null;

  constructor(public name: string, public version: string) {}

  /** Asks for per-session state (pdk/ABI.md section 12). */
  stateful(): Plugin { this.state = true; return this; }

  /** fn receives the policy's data file (JSON; null when the policy has
   * none) once per instance, before its first other event, as a Value that
   * stays valid for the instance's life; it returns null, or an error
   * message that fails the instance (pdk/ABI.md section 13). */
  onData(fn: (data: Value) => string | null): Plugin { this.data = fn; return this; }

  /** fn reads the policy's config (an object; {} when the user gave none)
   * once per instance, before its first event, and returns null, or an
   * error message to refuse the config: every event then fails with
   * BAD_CONFIG, and at load the plugin is refused. */
  onConfigure(fn: (config: Value) => string | null): Plugin { this.configure = fn; return this; }
  onCheck(fn: (ev: Event) => Verdict): Plugin { this.check = fn; return this; }
  onObserve(fn: (ev: Event, labels: Names) => void): Plugin { this.observe = fn; return this; }
  onList(fn: (ev: Event, hide: Names) => void): Plugin { this.list = fn; return this; }
}

let plugin: Plugin | null = null;

/** Makes p the plugin this module serves. Call it at the top level of the
 * entry file. */
export function register(p: Plugin): void {
  plugin = p;
}

let started = false;
let configured = false;
let configCode: u32 = 0;
let configError = "";
// The buffers the current event's and the config's Values point into,
// held so a garbage-collecting runtime keeps them.
let eventInput: ArrayBuffer | null = null;
let configInput: ArrayBuffer | null = null;
let output: Bytes | null = null;

function configure(p: Plugin, root: Value): void {
  configured = true;
  const cfg = root.get("plugin").get("config");
  let start: usize = 0, end: usize = 0;
  if (cfg.exists()) {
    end = skip(cfg.p, cfg.end);
    if (!end) {
      configCode = BAD_CONFIG;
      configError = "config is not valid JSON";
      return;
    }
    start = cfg.p;
  }
  // A private copy, so the event's input can go.
  const n = start ? <i32>(end - start) : 2;
  const copy = new ArrayBuffer(n);
  if (start) memory.copy(changetype<usize>(copy), start, n);
  else store<u16>(changetype<usize>(copy), 0x7D7B); // "{}"
  configInput = copy;
  const fn = p.configure;
  if (fn !== null) {
    const err = fn(new Value(changetype<usize>(copy), changetype<usize>(copy) + n));
    if (err !== null) {
      configCode = BAD_CONFIG;
      configError = err;
    }
  }
}

function handle(p: Plugin, event: u32, input: usize, n: usize, out: Bytes): u32 {
  const start = ws(input, input + n);
  if (start >= input + n || load<u8>(start) != 0x7B) {
    out.ascii("input is not a JSON object");
    return BAD_INPUT;
  }
  const root = new Value(start, input + n);
  if (!configured) configure(p, root);
  if (configCode) {
    writeUTF8(out, configError);
    return configCode;
  }
  const ev = new Event(event, root);
  if (event == EVENT_DESCRIBE) {
    out.ascii("{\"name\":");
    writeJSONString(out, p.name);
    out.ascii(",\"version\":");
    writeJSONString(out, p.version);
    out.ascii(",\"events\":[");
    let k = 0;
    if (p.list !== null) { out.ascii("\"list\""); k++; }
    if (p.check !== null) { if (k++) out.byte(0x2C); out.ascii("\"check\""); }
    if (p.observe !== null) { if (k++) out.byte(0x2C); out.ascii("\"observe\""); }
    if (p.data !== null) { if (k++) out.byte(0x2C); out.ascii("\"init\""); }
    out.ascii("]}");
    return OK;
  }
  if (event == EVENT_CHECK) {
    const fn = p.check;
    if (fn === null) return NOT_HANDLED;
    const v = fn(ev);
    if (v.failCode) {
      writeUTF8(out, v.reason);
      return v.failCode == OK || v.failCode == NOT_HANDLED ? INTERNAL : v.failCode;
    }
    out.ascii("{\"decision\":\"");
    const d = v.decision;
    out.ascii(d == Decision.Allow ? "allow" : d == Decision.Ask ? "ask" : d == Decision.Deny ? "deny" : "abstain");
    out.byte(0x22);
    if (v.code.length) { out.ascii(",\"code\":"); writeJSONString(out, v.code); }
    if (v.reason.length) { out.ascii(",\"reason\":"); writeJSONString(out, v.reason); }
    if (v.remember) out.ascii(",\"remember\":true");
    const labels = v.labels;
    if (labels !== null && labels.length) {
      out.ascii(",\"labels\":[");
      for (let i = 0; i < labels.length; i++) {
        if (i) out.byte(0x2C);
        writeJSONString(out, labels[i]);
      }
      out.byte(0x5D);
    }
    out.byte(0x7D);
    return OK;
  }
  if (event == EVENT_INIT) return initData(p, root, out);
  if (event == EVENT_OBSERVE || event == EVENT_LIST) {
    const fn = event == EVENT_LIST ? p.list : p.observe;
    if (fn === null) return NOT_HANDLED;
    const names = new Names();
    fn(ev, names);
    if (names.failCode) {
      writeUTF8(out, names.message);
      return names.failCode == OK || names.failCode == NOT_HANDLED ? INTERNAL : names.failCode;
    }
    if (names.n) {
      out.ascii(event == EVENT_LIST ? "{\"hide\":[" : "{\"labels\":[");
      out.raw(names.items.ptr, names.items.len);
      out.ascii("]}");
    }
    return OK;
  }
  return NOT_HANDLED;
}

/** The ABI marker (never called). Re-export it from the entry file. */
export function toolwarden_abi_v1(): void {}

/** Handles one event. Re-export it from the entry file. */
export function toolwarden_handle(event: u32, inputLen: u32): u32 {
  if (!started) {
    started = true;
    // What the module's top level built stays.
    if (isDefined(__toolwarden_arena_keep)) __toolwarden_arena_keep();
  }
  const p = plugin;
  if (p === null) {
    const m = "pdk: no plugin registered (call register at the top level)";
    const b = String.UTF8.encode(m);
    output_write(changetype<usize>(b), <u32>b.byteLength);
    return INTERNAL;
  }
  // What configure and the data handler keep lives on.
  const keep = !configured || event == EVENT_INIT;
  const buf = new ArrayBuffer(<i32>inputLen);
  eventInput = buf;
  const input = changetype<usize>(buf);
  let n: u32 = 0;
  while (n < inputLen) {
    const got = input_read(input + n, inputLen - n);
    if (!got) break;
    n += got;
  }
  const out = new Bytes(256);
  output = out;
  stateBegin();
  let code = handle(p, event, input, n, out);
  stateEnd(p.state, event, code, out);
  if (out.len && output_write(out.ptr, <u32>out.len) != 0) code = INTERNAL;
  eventInput = null;
  output = null;
  if (isDefined(__toolwarden_arena_reset)) {
    if (keep && configured) __toolwarden_arena_keep();
    else __toolwarden_arena_reset();
  } else if (ASC_RUNTIME == 1) { // minimal: collect explicitly
    __collect();
  }
  return code;
}

// ---------------------------------------------------------------- session state

// Session state (pdk/ABI.md section 12). A plugin built with .stateful()
// gets its per-session counters and entries in every check and observe,
// and may change them; the host keeps them in its session (they outlive
// any instance) and applies a check's changes before the next check of
// the same session runs the plugin:
//
//   .onCheck((ev: Event): Verdict => {
//     if (stateCounter(ev, "calls") >= 2) return Verdict.ask("budget_spent", "2 calls already ran");
//     stateAdd("calls", 1);
//     return Verdict.abstain();
//   })
//
// Bounds per plugin per session: 64 keys, keys of 1-256 bytes, values of
// at most 1024 bytes; an update over one fails the event (on_error applies).

// The current event's changes, allocated at its first change (in the
// event's memory, which a runtime with an arena frees after the event).
let stAdd = new Bytes(16), stSet = new Bytes(16), stDel = new Bytes(16);
let stChanged = false;

function stateChanges(): void {
  if (stChanged) return;
  stChanged = true;
  stAdd = new Bytes(64);
  stSet = new Bytes(64);
  stDel = new Bytes(64);
}

/** Counter key of the plugin's session state, 0 when it does not exist. */
export function stateCounter(ev: Event, key: string): i64 {
  const v = ev.get("state").get("counters").get(key);
  if (v.kind() != Kind.Number) return 0;
  let p = v.p;
  const neg = load<u8>(p) == 0x2D;
  if (neg) p++;
  let n: i64 = 0;
  while (p < v.end) {
    const c = <i64>load<u8>(p);
    if (c < 0x30 || c > 0x39) break;
    n = n * 10 + (c - 0x30);
    p++;
  }
  return neg ? -n : n;
}

/** Entry key of the plugin's session state, or null. */
export function stateEntry(ev: Event, key: string): string | null {
  return ev.get("state").get("entries").get(key).str();
}

/** Adds n (may be negative) to counter key; a counter that does not exist
 * starts at 0. Add once per key per event: a JSON key given twice counts
 * once (the last). */
export function stateAdd(key: string, n: i64): void {
  stateChanges();
  if (stAdd.len) stAdd.byte(0x2C);
  writeJSONString(stAdd, key);
  stAdd.byte(0x3A);
  stAdd.ascii(n.toString());
}

/** Sets entry key to value. */
export function stateSet(key: string, value: string): void {
  stateChanges();
  if (stSet.len) stSet.byte(0x2C);
  writeJSONString(stSet, key);
  stSet.byte(0x3A);
  writeJSONString(stSet, value);
}

/** Deletes counter or entry key (a counter so reset starts again at 0).
 * Deletes apply before adds and sets. */
export function stateDelete(key: string): void {
  stateChanges();
  if (stDel.len) stDel.byte(0x2C);
  writeJSONString(stDel, key);
}

function stateBegin(): void { stChanged = false; }

// stateMember adds member to the JSON object in out, or makes one of it.
function stateMember(out: Bytes, member: Bytes): void {
  if (out.len && load<u8>(out.ptr + out.len - 1) == 0x7D) {
    out.len--;
    if (out.len && load<u8>(out.ptr + out.len - 1) != 0x7B) out.byte(0x2C);
  } else {
    out.byte(0x7B);
  }
  out.raw(member.ptr, member.len);
  out.byte(0x7D);
}

// stateEnd asks for state in describe and sends the event's changes with
// a check or observe output.
function stateEnd(stateful: bool, event: u32, code: u32, out: Bytes): void {
  if (!stateful || code != OK) return;
  if (event != EVENT_DESCRIBE && !stChanged) return;
  const m = new Bytes(64);
  if (event == EVENT_DESCRIBE) {
    m.ascii("\"state\":true");
    stateMember(out, m);
    return;
  }
  if (event != EVENT_CHECK && event != EVENT_OBSERVE) return;
  if (!stAdd.len && !stSet.len && !stDel.len) return;
  m.ascii("\"state\":{");
  let k = 0;
  if (stAdd.len) { m.ascii("\"add\":{"); m.raw(stAdd.ptr, stAdd.len); m.byte(0x7D); k++; }
  if (stSet.len) { if (k++) m.byte(0x2C); m.ascii("\"set\":{"); m.raw(stSet.ptr, stSet.len); m.byte(0x7D); }
  if (stDel.len) { if (k++) m.byte(0x2C); m.ascii("\"delete\":["); m.raw(stDel.ptr, stDel.len); m.byte(0x5D); }
  m.byte(0x7D);
  stateMember(out, m);
}

// ---------------------------------------------------------------- policy data

// The data file's bytes, held for the instance's life.
let dataInput: ArrayBuffer | null = null;

function initData(p: Plugin, root: Value, out: Bytes): u32 {
  const fn = p.data;
  if (fn === null) return NOT_HANDLED;
  const d = root.get("data");
  let n = 4;
  let end: usize = 0;
  if (d.exists()) {
    end = skip(d.p, d.end);
    if (!end) {
      out.ascii("data is not valid JSON");
      return BAD_INPUT;
    }
    n = <i32>(end - d.p);
  }
  const copy = new ArrayBuffer(n);
  if (end) memory.copy(changetype<usize>(copy), d.p, n);
  else store<u32>(changetype<usize>(copy), 0x6C6C756E); // "null"
  dataInput = copy;
  const err = fn(new Value(changetype<usize>(copy), changetype<usize>(copy) + n));
  if (err !== null) {
    writeUTF8(out, err);
    return BAD_CONFIG;
  }
  return OK;
}
