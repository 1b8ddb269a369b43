//! A command line split into words as POSIX sh splits a simple command,
//! without expanding anything, so a policy can judge a `command` argument by
//! its words rather than by substrings. The rules are the Go kit's
//! `SplitWords` (pdk/go/shellwords.go), and the vectors every kit passes are
//! pdk/testdata/shellwords.json:
//!
//! - words are separated by unquoted spaces and tabs;
//! - `'...'` keeps everything up to the next `'` as is;
//! - `"..."` keeps everything up to the next unescaped `"`, where a
//!   backslash escapes only `$` `` ` `` `"` `\` and newline (and is
//!   otherwise kept);
//! - an unquoted backslash escapes the next byte;
//! - backslash-newline is removed (a line continuation), quoted or not;
//! - an unquoted `#` at the start of a word starts a comment to the line's end;
//! - `$`, `` ` ``, `~`, `*` and the like are kept as written.
//!
//! Refused, because sh would not run the words as one command: an unquoted
//! `| & ; < > ( )` (pipes, lists, redirections, subshells, `$(...)`) and a
//! newline followed by anything but blanks; also an unterminated quote and a
//! trailing backslash.

use crate::Alloc;

/// Why a line was refused, with the byte offset where it was seen.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WordsError {
    UnterminatedSingleQuote(usize),
    UnterminatedDoubleQuote(usize),
    TrailingBackslash(usize),
    /// An unquoted `| & ; < > ( )`.
    Operator(u8, usize),
    /// A newline with more of the line after it.
    Newline(usize),
}

impl WordsError {
    /// The refusal as text, e.g. "shell words: unquoted ';' at byte 2: ...".
    pub fn message<'a>(&self, alloc: Alloc<'a>) -> &'a str {
        let mut s = alloc.string();
        let at = |s: &mut crate::StrBuf<'a>, n: usize| {
            s.push_str(" at byte ");
            s.push_uint(n);
        };
        s.push_str("shell words: ");
        match *self {
            WordsError::UnterminatedSingleQuote(i) => {
                s.push_str("unterminated single quote");
                at(&mut s, i);
            }
            WordsError::UnterminatedDoubleQuote(i) => {
                s.push_str("unterminated double quote");
                at(&mut s, i);
            }
            WordsError::TrailingBackslash(i) => {
                s.push_str("trailing backslash");
                at(&mut s, i);
            }
            WordsError::Operator(c, i) => {
                s.push_str("unquoted '");
                s.push(c as char);
                s.push('\'');
                at(&mut s, i);
                s.push_str(": the line is not a simple command (quote it to mean the character)");
            }
            WordsError::Newline(i) => {
                s.push_str("newline");
                at(&mut s, i);
                s.push_str(": the line holds more than one command");
            }
        }
        s.as_str()
    }
}

/// Where the splitter puts what it reads: counted first, then written.
trait Sink {
    fn byte(&mut self, b: u8);
    fn bytes(&mut self, b: &[u8]);
    fn end_word(&mut self);
}

struct Count {
    words: usize,
    bytes: usize,
}

impl Sink for Count {
    fn byte(&mut self, _: u8) {
        self.bytes += 1;
    }
    fn bytes(&mut self, b: &[u8]) {
        self.bytes += b.len();
    }
    fn end_word(&mut self) {
        self.words += 1;
    }
}

struct Write<'a> {
    buf: &'a mut [u8],
    len: usize,
    start: usize,
    words: &'a mut [&'a str],
    n: usize,
}

impl<'a> Sink for Write<'a> {
    fn byte(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }
    fn bytes(&mut self, b: &[u8]) {
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
    }
    fn end_word(&mut self) {
        let w = &self.buf[self.start..self.len];
        // The words are cut from a &str at ASCII bytes only and escaped
        // bytes are copied in order, so each word is UTF-8.
        let w = unsafe { core::str::from_utf8_unchecked(core::slice::from_raw_parts(w.as_ptr(), w.len())) };
        self.words[self.n] = w;
        self.n += 1;
        self.start = self.len;
    }
}

/// Splits `line` into words in the arena (see the module's rules).
pub fn split_words<'a>(line: &str, alloc: Alloc<'a>) -> Result<&'a [&'a str], WordsError> {
    let mut count = Count { words: 0, bytes: 0 };
    scan(line.as_bytes(), &mut count)?;
    if count.words == 0 {
        return Ok(&[]);
    }
    let buf = alloc.bytes(count.bytes);
    // The arena is 8-aligned; &str is two words.
    let raw = alloc.bytes(count.words * core::mem::size_of::<&str>());
    let words = unsafe { core::slice::from_raw_parts_mut(raw.as_mut_ptr() as *mut &'a str, count.words) };
    for w in words.iter_mut() {
        *w = "";
    }
    let mut out = Write { buf, len: 0, start: 0, words, n: 0 };
    scan(line.as_bytes(), &mut out)?;
    Ok(out.words)
}

fn scan<S: Sink>(s: &[u8], out: &mut S) -> Result<(), WordsError> {
    let mut in_word = false;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        match c {
            b' ' | b'\t' => {
                if in_word {
                    out.end_word();
                    in_word = false;
                }
            }
            b'\n' => {
                if in_word {
                    out.end_word();
                }
                if s[i + 1..].iter().any(|&d| d != b' ' && d != b'\t' && d != b'\n') {
                    return Err(WordsError::Newline(i));
                }
                return Ok(());
            }
            b'#' if !in_word => {
                while i + 1 < s.len() && s[i + 1] != b'\n' {
                    i += 1;
                }
            }
            b'|' | b'&' | b';' | b'<' | b'>' | b'(' | b')' => return Err(WordsError::Operator(c, i)),
            b'\\' => {
                if i + 1 == s.len() {
                    return Err(WordsError::TrailingBackslash(i));
                }
                i += 1;
                if s[i] != b'\n' {
                    out.byte(s[i]);
                    in_word = true;
                }
            }
            b'\'' => {
                let start = i;
                i += 1;
                let from = i;
                while i < s.len() && s[i] != b'\'' {
                    i += 1;
                }
                if i == s.len() {
                    return Err(WordsError::UnterminatedSingleQuote(start));
                }
                out.bytes(&s[from..i]);
                in_word = true;
            }
            b'"' => {
                let start = i;
                i += 1;
                loop {
                    if i == s.len() {
                        return Err(WordsError::UnterminatedDoubleQuote(start));
                    }
                    let mut d = s[i];
                    if d == b'"' {
                        break;
                    }
                    if d == b'\\' && i + 1 < s.len() {
                        match s[i + 1] {
                            b'$' | b'`' | b'"' | b'\\' => {
                                i += 1;
                                d = s[i];
                            }
                            b'\n' => {
                                i += 2;
                                continue;
                            }
                            _ => {}
                        }
                    }
                    out.byte(d);
                    i += 1;
                }
                in_word = true;
            }
            _ => {
                out.byte(c);
                in_word = true;
            }
        }
        i += 1;
    }
    if in_word {
        out.end_word();
    }
    Ok(())
}
