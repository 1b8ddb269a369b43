// Regular expressions in Go's RE2 syntax, compiled and matched by the host's
// own regexp through the optional imports of pdk/ABI.md section 16, so a
// pattern is accepted, refused and matched exactly as a Go plugin's
// regexp.Compile would: all of Go's syntax, Unicode classes and case
// folding included, in time linear in the subject.
//
//   import { Regex } from "@toolwarden/pdk/assembly/regex";
//   // in configure (the host keeps the compiled pattern for the instance):
//   deny = Regex.compile(pattern);
//   if (deny.error !== null) return deny.error;
//   // in check:
//   if (deny.isMatch(cmd)) ...
//
// The host holds at most 256 patterns per instance (of at most 4096 bytes,
// programs of at most 65536 instructions): compile in configure, once.
// Compiling works only during an event (configure runs in one). A plugin
// that never compiles a pattern imports nothing for it.

@external("toolwarden", "regex_compile")
declare function regex_compile(ptr: usize, len: u32): i32;
@external("toolwarden", "regex_match")
declare function regex_match(handle: i32, ptr: usize, len: u32): i32;
@external("toolwarden", "regex_error")
declare function regex_error(dst: usize, cap: u32): u32;

/** A compiled pattern; error is set (and nothing matches) when the pattern
 * was refused, in Go's words where Go refuses it too:
 * "error parsing regexp: missing closing ): `(a`". */
export class Regex {
  error: string | null = null;
  handle: i32 = 0;

  static compile(pattern: string): Regex {
    const re = new Regex();
    const p = String.UTF8.encode(pattern);
    const h = regex_compile(changetype<usize>(p), <u32>p.byteLength);
    if (h > 0) {
      re.handle = h;
      return re;
    }
    const n = regex_error(0, 0);
    const text = new ArrayBuffer(<i32>n);
    const got = regex_error(changetype<usize>(text), n);
    re.error = got > 0 ? String.UTF8.decode(got < n ? text.slice(0, <i32>got) : text) : "regex_compile: refused (called outside an event?)";
    return re;
  }

  /** Whether the pattern matches anywhere in s (sent to the host as UTF-8). */
  isMatch(s: string): bool {
    if (this.error !== null || this.handle == 0) return false;
    const b = String.UTF8.encode(s);
    const m = regex_match(this.handle, changetype<usize>(b), <u32>b.byteLength);
    if (m < 0) throw new Error("regex_match: the host does not know this pattern");
    return m == 1;
  }
}
