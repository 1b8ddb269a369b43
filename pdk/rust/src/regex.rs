//! Regular expressions in Go's RE2 syntax, compiled and matched by the
//! host's own `regexp` through the optional imports `regex_compile`,
//! `regex_match` and `regex_error` (pdk/ABI.md section 16). A pattern is
//! accepted, refused (with Go's text) and matched exactly as a Go plugin's
//! `regexp.MustCompile(p).Match(b)` would, in time linear in the subject.
//!
//! ```ignore
//! use toolwarden_pdk::regex;
//! // In configure, once per instance (the host keeps the compiled pattern
//! // for the instance, and holds at most 256 per instance):
//! let re = regex::compile(cfg.get("deny").str().unwrap_or(""), alloc)
//!     .map_err(|e| Error::bad_config(e.message(alloc)))?;
//! // In check:
//! if re.is_match(cmd.as_bytes()) { /* ... */ }
//! ```
//!
//! The host's bounds: at most 256 patterns per instance, patterns of at
//! most 4096 bytes, programs of at most 65536 instructions (counted repeats
//! such as {1000} expanded). `compile` works only while the instance
//! handles an event (configure runs in one); a module that never calls it
//! does not import anything for it.

use crate::Alloc;

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "toolwarden")]
extern "C" {
    fn regex_compile(ptr: *const u8, len: u32) -> i32;
    fn regex_match(handle: i32, ptr: *const u8, len: u32) -> i32;
    fn regex_error(dst: *mut u8, cap: u32) -> u32;
}

// Native builds (unit tests of plugin logic) have no host: nothing compiles.
#[cfg(not(target_arch = "wasm32"))]
unsafe fn regex_compile(_: *const u8, _: u32) -> i32 {
    -3
}
#[cfg(not(target_arch = "wasm32"))]
unsafe fn regex_match(_: i32, _: *const u8, _: u32) -> i32 {
    -1
}
#[cfg(not(target_arch = "wasm32"))]
unsafe fn regex_error(_: *mut u8, _: u32) -> u32 {
    0
}

/// A refused pattern: the host's text, Go's where Go refuses the pattern
/// ("error parsing regexp: missing closing ): `((`"), or the bound it broke.
#[derive(Clone, Copy)]
pub struct Error {
    text: &'static str,
}

impl Error {
    /// The refusal as text.
    pub fn message<'a>(&self, _alloc: Alloc<'a>) -> &'a str {
        self.text
    }

    /// The refusal as text, for the life of the instance.
    pub fn text(&self) -> &'static str {
        self.text
    }
}

/// A compiled pattern: a handle to the host's copy, valid for the instance.
#[derive(Clone, Copy)]
pub struct Regex {
    handle: i32,
}

impl Regex {
    /// A placeholder that is never matched.
    pub const EMPTY: Regex = Regex { handle: 0 };

    /// Whether the pattern matches anywhere in s (UTF-8 as Go reads it: an
    /// invalid byte is U+FFFD). A handle the host does not know (the
    /// instance did not compile it) traps: the event fails closed.
    pub fn is_match(&self, s: &[u8]) -> bool {
        if self.handle == 0 {
            return false;
        }
        match unsafe { regex_match(self.handle, s.as_ptr(), s.len() as u32) } {
            1 => true,
            0 => false,
            _ => crate::abi::trap("toolwarden_pdk: regex_match: the host does not know this pattern (compile it on this instance, during an event)"),
        }
    }
}

/// Compiles a pattern as Go's regexp.Compile would read it. The error's
/// text is allocated with alloc (pass configure's, which lives for the
/// instance).
pub fn compile(pattern: &str, alloc: Alloc<'static>) -> Result<Regex, Error> {
    let h = unsafe { regex_compile(pattern.as_ptr(), pattern.len() as u32) };
    if h > 0 {
        return Ok(Regex { handle: h });
    }
    let n = unsafe { regex_error(core::ptr::null_mut(), 0) } as usize;
    let buf = alloc.bytes(n);
    let got = unsafe { regex_error(buf.as_mut_ptr(), n as u32) } as usize;
    let text = core::str::from_utf8(&buf[..got.min(n)]).unwrap_or("regex_compile: refused");
    Err(Error { text: if text.is_empty() { "regex_compile: refused (called outside an event?)" } else { text } })
}

/// The code point at s[i] and its length, as Go's utf8.DecodeRune reads it
/// (invalid UTF-8: U+FFFD, one byte); (-1, 0) at the end.
#[inline]
pub fn rune_at(s: &[u8], i: usize) -> (i32, usize) {
    match s.get(i) {
        None => (-1, 0),
        Some(&b) if b < 0x80 => (b as i32, 1),
        Some(_) => decode(&s[i..]),
    }
}

fn decode(s: &[u8]) -> (i32, usize) {
    const BAD: (i32, usize) = (0xFFFD, 1);
    let b0 = s[0] as u32;
    // The continuation bytes needed, the range of the first one (which
    // rules out overlong forms, surrogates and code points past U+10FFFF),
    // and the bits of b0.
    let (need, lo, hi, bits) = match b0 {
        0xC2..=0xDF => (1, 0x80, 0xBF, b0 & 0x1F),
        0xE0 => (2, 0xA0, 0xBF, 0),
        0xE1..=0xEC | 0xEE | 0xEF => (2, 0x80, 0xBF, b0 & 0xF),
        0xED => (2, 0x80, 0x9F, 0xD),
        0xF0 => (3, 0x90, 0xBF, 0),
        0xF1..=0xF3 => (3, 0x80, 0xBF, b0 & 7),
        0xF4 => (3, 0x80, 0x8F, 4),
        _ => return BAD,
    };
    if s.len() <= need || !(lo..=hi).contains(&(s[1] as u32)) {
        return BAD;
    }
    let mut r = bits << 6 | s[1] as u32 & 0x3F;
    for &b in &s[2..=need] {
        if b & 0xC0 != 0x80 {
            return BAD;
        }
        r = r << 6 | b as u32 & 0x3F;
    }
    (r as i32, need + 1)
}
