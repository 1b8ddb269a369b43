//! The paths a server may use for a path argument, from the envelope's
//! server_context, as the Go reference's ../resolve.go has them: "/a/../b"
//! cleaned; "~" and "~/x" joined to the home; anything else joined to the
//! working directory, then to each root and arg_dir, and for a file URI
//! also its decoded path (whole, and cut at the first '?' or '#'). A value
//! whose forms need something unknown is unresolvable, and says why.

use crate::glob;
use toolwarden_pdk::{Alloc, Value};

pub const WHY_CWD: &str = "the server's working directory is unknown";
pub const WHY_HOME: &str = "the server's home directory is unknown";
pub const WHY_USER: &str = "another user's home directory is not resolved";
pub const WHY_URI: &str = "a file URI on another host, or with a bad %-escape";

/// server_context: absolute paths, empty where unknown. The other bases
/// (roots, then arg_dirs) are read from `sc` as they are needed.
pub struct Context<'a> {
    cwd: &'a [u8],
    home: &'a [u8],
    sc: Value<'a>,
}

fn abs<'a>(v: Value<'a>) -> &'a [u8] {
    match v.str_bytes() {
        Some(s) if s.first() == Some(&b'/') => s,
        _ => b"",
    }
}

impl<'a> Context<'a> {
    pub fn read(sc: Value<'a>, alloc: Alloc<'a>) -> Self {
        let mut home = abs(sc.get_bytes(b"home"));
        if !home.is_empty() {
            home = glob::clean(home, alloc); // a glob on "~/..." compares paths to it
        }
        Context { cwd: abs(sc.get_bytes(b"cwd")), home, sc }
    }

    /// The home, cleaned; empty when unknown.
    pub fn home(&self) -> &'a [u8] {
        self.home
    }

    /// Calls `form` with each path the server may use for `s` (absolute,
    /// cleaned) until it returns false; returns why `s` cannot be resolved
    /// ("" when it can), before calling `form` at all.
    pub fn resolve(&self, s: &'a [u8], alloc: Alloc<'a>, mut form: impl FnMut(&'a [u8]) -> bool) -> &'static str {
        if s.first() == Some(&b'/') {
            form(glob::clean(s, alloc));
            return "";
        }
        if s == b"~" || s.starts_with(b"~/") {
            if self.home.is_empty() {
                return WHY_HOME;
            }
            form(glob::clean(join(self.home, b"", &s[1..], alloc), alloc));
            return "";
        }
        if s.first() == Some(&b'~') {
            return WHY_USER;
        }
        if self.cwd.is_empty() {
            return WHY_CWD;
        }
        let uri = match file_uri_path(s, alloc) {
            Some(u) => u,
            None => return WHY_URI,
        };
        if !form(glob::clean(join(self.cwd, b"/", s, alloc), alloc)) {
            return "";
        }
        for key in [&b"roots"[..], b"arg_dirs"] {
            for e in self.sc.get_bytes(key).elements() {
                let b = abs(e);
                if !b.is_empty() && !form(glob::clean(join(b, b"/", s, alloc), alloc)) {
                    return "";
                }
            }
        }
        if !uri.is_empty() {
            if !form(glob::clean(uri, alloc)) {
                return "";
            }
            if let Some(i) = uri.iter().position(|&c| c == b'?' || c == b'#') {
                form(glob::clean(&uri[..i], alloc));
            }
        }
        ""
    }
}

/// a + sep + b, in the arena.
pub fn join<'a>(a: &[u8], sep: &[u8], b: &[u8], alloc: Alloc<'a>) -> &'a [u8] {
    let out = alloc.bytes(a.len() + sep.len() + b.len());
    out[..a.len()].copy_from_slice(a);
    out[a.len()..a.len() + sep.len()].copy_from_slice(sep);
    out[a.len() + sep.len()..].copy_from_slice(b);
    out
}

/// A file URI's percent-decoded path ("file:///p", "file://localhost/p",
/// the scheme in any case); empty for any other string; None for a file
/// URI whose path cannot be known.
fn file_uri_path<'a>(s: &'a [u8], alloc: Alloc<'a>) -> Option<&'a [u8]> {
    if s.len() < 7 || !s[..7].eq_ignore_ascii_case(b"file://") {
        return Some(b"");
    }
    let mut rest = &s[7..];
    if rest.len() >= 9 && rest[..9].eq_ignore_ascii_case(b"localhost") {
        rest = &rest[9..];
    }
    if rest.first() != Some(&b'/') {
        return None;
    }
    let out = alloc.bytes(rest.len());
    let (mut i, mut n) = (0, 0);
    while i < rest.len() {
        let mut c = rest[i];
        if c == b'%' {
            if i + 2 >= rest.len() {
                return None;
            }
            let (hi, lo) = (unhex(rest[i + 1])?, unhex(rest[i + 2])?);
            c = hi << 4 | lo;
            i += 2;
        }
        out[n] = c;
        n += 1;
        i += 1;
    }
    Some(&out[..n])
}

fn unhex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}
