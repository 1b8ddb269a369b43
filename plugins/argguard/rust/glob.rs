//! Path globs (deny_glob and friends) and tool or app name patterns, as the
//! Go reference's ../glob.go has them.

use toolwarden_pdk::regex::{self, Regex};
use toolwarden_pdk::ArenaVec as Vec;
use toolwarden_pdk::Alloc;

/// Compiles a path glob as compilePathGlob does: translated to a regexp, so
/// that matching is linear whatever the pattern. "**" is any run (across
/// '/'), "*" a run without '/', "?" one character other than '/',
/// "[...]" a class ("[!...]" negated), "\x" a literal x; a trailing "/**"
/// also matches the directory itself. A glob whose translation Go refuses
/// (an odd class) matches itself literally.
pub fn compile(p: &'static str, alloc: Alloc<'static>) -> Result<Regex, regex::Error> {
    let s = p.as_bytes();
    let mut b = Vec::new(alloc);
    b.extend_from_slice(b"\\A");
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        i += 1;
        match c {
            b'/' if &s[i - 1..] == b"/**" => {
                b.extend_from_slice(b"(?:/.*)?");
                i += 2;
            }
            b'*' if s.get(i) == Some(&b'*') => {
                b.extend_from_slice(b".*");
                i += 1;
            }
            b'*' => b.extend_from_slice(b"[^/]*"),
            b'?' => b.extend_from_slice(b"[^/]"),
            b'\\' if i < s.len() => {
                quote_meta(&mut b, s[i]);
                i += 1;
            }
            b'[' => match s[i..].iter().position(|&x| x == b']') {
                None => b.extend_from_slice(b"\\["),
                Some(j) => {
                    let mut class = &s[i..i + j];
                    b.push(b'[');
                    if class.first() == Some(&b'!') {
                        b.push(b'^');
                        class = &class[1..];
                    }
                    for &x in class {
                        if x == b'\\' {
                            b.push(b'\\');
                        }
                        b.push(x);
                    }
                    b.push(b']');
                    i += j + 1;
                }
            },
            _ => quote_meta(&mut b, c),
        }
    }
    b.extend_from_slice(b"\\z");
    match regex::compile(as_str(b), alloc) {
        // Refused by Go (not for a bound of the host's: that is kept).
        Err(e) if e.text().starts_with("error parsing regexp: ") => {
            let mut b = Vec::new(alloc);
            b.extend_from_slice(b"\\A");
            for &c in s {
                quote_meta(&mut b, c);
            }
            b.extend_from_slice(b"\\z");
            regex::compile(as_str(b), alloc)
        }
        r => r,
    }
}

/// The bytes of a translation: whole characters of the glob (copied byte
/// by byte) and ASCII.
fn as_str(b: Vec<u8>) -> &'static str {
    core::str::from_utf8(b.into_static()).unwrap_or("")
}

/// Go's regexp.QuoteMeta of one byte.
fn quote_meta(b: &mut Vec<u8>, c: u8) {
    if b"\\.+*?()|[]{}^$".contains(&c) {
        b.push(b'\\');
    }
    b.push(c);
}

/// Go's path.Clean, on bytes. The result is the input itself (a prefix of
/// it) unless it had to be rewritten.
pub fn clean<'a>(path: &'a [u8], alloc: Alloc<'a>) -> &'a [u8] {
    if path.is_empty() {
        return b".";
    }
    let rooted = path[0] == b'/';
    let n = path.len();
    let mut out = LazyBuf { s: path, buf: None, w: 0, alloc };
    let (mut r, mut dotdot) = (0, 0);
    if rooted {
        out.append(b'/');
        r = 1;
        dotdot = 1;
    }
    while r < n {
        if path[r] == b'/' {
            r += 1; // empty element
        } else if path[r] == b'.' && (r + 1 == n || path[r + 1] == b'/') {
            r += 1; // .
        } else if path[r] == b'.' && path[r + 1] == b'.' && (r + 2 == n || path[r + 2] == b'/') {
            r += 2; // ..: back to the last '/', if there is one to go back to
            if out.w > dotdot {
                out.w -= 1;
                while out.w > dotdot && out.index(out.w) != b'/' {
                    out.w -= 1;
                }
            } else if !rooted {
                if out.w > 0 {
                    out.append(b'/');
                }
                out.append(b'.');
                out.append(b'.');
                dotdot = out.w;
            }
        } else {
            if rooted && out.w != 1 || !rooted && out.w != 0 {
                out.append(b'/');
            }
            while r < n && path[r] != b'/' {
                out.append(path[r]);
                r += 1;
            }
        }
    }
    if out.w == 0 {
        return b".";
    }
    match out.buf {
        None => &path[..out.w],
        Some(buf) => &buf[..out.w],
    }
}

/// Go's path.lazybuf: the input until the output first differs from it.
struct LazyBuf<'a> {
    s: &'a [u8],
    buf: Option<&'a mut [u8]>,
    w: usize,
    alloc: Alloc<'a>,
}

impl<'a> LazyBuf<'a> {
    fn index(&self, i: usize) -> u8 {
        match &self.buf {
            Some(b) => b[i],
            None => self.s[i],
        }
    }

    fn append(&mut self, c: u8) {
        if self.buf.is_none() {
            if self.w < self.s.len() && self.s[self.w] == c {
                self.w += 1;
                return;
            }
            let b = self.alloc.bytes(self.s.len());
            b[..self.w].copy_from_slice(&self.s[..self.w]);
            self.buf = Some(b);
        }
        if let Some(b) = &mut self.buf {
            b[self.w] = c;
        }
        self.w += 1;
    }
}

/// Tool and app names: '*' any run, '?' one byte (nameMatch).
pub fn name_match(p: &[u8], s: &[u8]) -> bool {
    if p == b"*" {
        return true;
    }
    let (mut pi, mut si) = (0, 0);
    let (mut star, mut mark) = (usize::MAX, 0);
    while si < s.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = pi;
            mark = si;
            pi += 1;
        } else if star != usize::MAX {
            pi = star + 1;
            mark += 1;
            si = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}
