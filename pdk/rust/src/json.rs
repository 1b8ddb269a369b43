//! A lazy JSON reader over an event's input.

use crate::arena::{self, Buf};

/// The deepest nesting of arrays and objects a scan accepts.
pub const MAX_DEPTH: usize = 256;

/// One JSON value of an event's input (or of the config). It holds the
/// bytes from the value's first byte to the end of the document: a value is
/// scanned, and validated, only as far as a reader needs.
///
/// The default `Value` is missing: `exists` is false and every reader
/// returns its "not found" answer.
#[derive(Clone, Copy, Default)]
pub struct Value<'a> {
    b: &'a [u8],
}

/// The JSON type of a value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Missing,
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl<'a> Value<'a> {
    pub(crate) fn new(b: &'a [u8]) -> Self {
        Value { b }
    }

    /// Parses a whole document: one value, white space around it allowed.
    pub fn parse(b: &'a [u8]) -> Option<Self> {
        let start = ws(b, 0);
        let end = skip(b, start)?;
        if ws(b, end) != b.len() {
            return None;
        }
        Some(Value { b: &b[start..end] })
    }

    /// Whether the value is present (null counts as present).
    pub fn exists(&self) -> bool {
        !self.b.is_empty()
    }

    /// The value's JSON type, from its first byte.
    pub fn kind(&self) -> Kind {
        match self.b.first() {
            None => Kind::Missing,
            Some(b'n') => Kind::Null,
            Some(b't') | Some(b'f') => Kind::Bool,
            Some(b'"') => Kind::String,
            Some(b'[') => Kind::Array,
            Some(b'{') => Kind::Object,
            Some(_) => Kind::Number,
        }
    }

    /// The value's JSON text, validated; `None` if missing or malformed.
    pub fn raw(&self) -> Option<&'a [u8]> {
        if self.b.is_empty() {
            return None;
        }
        skip(self.b, 0).map(|end| &self.b[..end])
    }

    /// The first member of an object named `key`, or a missing value.
    /// Keys without escapes are compared as bytes, undecoded: this is the
    /// loop plugins spend their time in.
    pub fn get(&self, key: &str) -> Value<'a> {
        // Raw bytes equal to key are the key; raw bytes that differ can only
        // decode to it through U+FFFD replacing invalid UTF-8.
        let fffd = key.contains('\u{FFFD}');
        self.member(|body, escaped| if escaped { decode(body) == key } else { body == key.as_bytes() || fffd && utf8(body) == key })
    }

    /// Element `i` of an array, or a missing value.
    pub fn index(&self, i: usize) -> Value<'a> {
        self.elements().nth(i).unwrap_or_default()
    }

    /// A string's text, escapes decoded (into the arena when there are
    /// any); `None` for any other kind or a malformed string. Invalid UTF-8
    /// is replaced by U+FFFD.
    pub fn str(&self) -> Option<&'a str> {
        if self.kind() != Kind::String {
            return None;
        }
        string(self.b, 0).map(|(s, _)| s)
    }

    /// Whether the value is a string equal to `s` (compared undecoded when
    /// it has no escapes).
    pub fn str_eq(&self, s: &str) -> bool {
        if self.b.first() != Some(&b'"') {
            return false;
        }
        match skip_string(self.b, 0) {
            Some((end, false)) => {
                let body = &self.b[1..end - 1];
                body == s.as_bytes() || s.contains('\u{FFFD}') && utf8(body) == s
            }
            Some((end, true)) => decode(&self.b[1..end - 1]) == s,
            None => false,
        }
    }

    /// A boolean's value.
    pub fn bool(&self) -> Option<bool> {
        if self.b.starts_with(b"true") {
            Some(true)
        } else if self.b.starts_with(b"false") {
            Some(false)
        } else {
            None
        }
    }

    /// Whether the value is the literal true.
    pub fn is_true(&self) -> bool {
        self.b.starts_with(b"true")
    }

    /// A number's value (parsed as f64, decimal digits only; good enough for
    /// config values and counts).
    pub fn f64(&self) -> Option<f64> {
        if self.kind() != Kind::Number {
            return None;
        }
        let raw = self.raw()?;
        parse_f64(raw)
    }

    /// The members of an object; empty for any other kind. Each step skips
    /// (and validates) the previous value; a malformed object ends early
    /// (see `Members::bad`).
    pub fn members(&self) -> Members<'a> {
        Members { it: self.members_bytes() }
    }

    /// The elements of an array; empty for any other kind.
    pub fn elements(&self) -> Elements<'a> {
        Elements { it: Iter::new(self.b, b'[') }
    }
}

struct Iter<'a> {
    b: &'a [u8],
    i: usize,
    val: usize,
    close: u8,
    first: bool,
    done: bool,
    bad: bool,
}

impl<'a> Iter<'a> {
    fn new(b: &'a [u8], open: u8) -> Self {
        let ok = b.first() == Some(&open);
        Iter { b, i: 1, val: 0, close: if open == b'{' { b'}' } else { b']' }, first: true, done: !ok, bad: !ok }
    }

    /// Moves past the previous value and its separator.
    fn step(&mut self) -> bool {
        if self.done {
            return false;
        }
        let b = self.b;
        let mut i;
        if self.first {
            self.first = false;
            i = ws(b, self.i);
            if b.get(i) == Some(&self.close) {
                self.done = true;
                return false;
            }
        } else {
            i = match skip(b, self.val) {
                Some(end) => ws(b, end),
                None => return self.fail(),
            };
            match b.get(i) {
                Some(&c) if c == self.close => {
                    self.done = true;
                    return false;
                }
                Some(b',') => i += 1,
                _ => return self.fail(),
            }
        }
        self.i = ws(b, i);
        true
    }

    fn fail(&mut self) -> bool {
        self.done = true;
        self.bad = true;
        false
    }
}

/// Iterator over an object's members: (name, value). Names are
/// `members_bytes`'s, with invalid UTF-8 replaced by U+FFFD.
pub struct Members<'a> {
    it: MembersBytes<'a>,
}

impl<'a> Members<'a> {
    /// Whether the iteration stopped at malformed input.
    pub fn bad(&self) -> bool {
        self.it.bad()
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, Value<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        self.it.next().map(|(name, v)| (utf8(name), v))
    }
}

/// Iterator over an array's elements.
pub struct Elements<'a> {
    it: Iter<'a>,
}

impl<'a> Elements<'a> {
    /// Whether the iteration stopped at malformed input.
    pub fn bad(&self) -> bool {
        self.it.bad
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = Value<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if !self.it.step() {
            return None;
        }
        self.it.val = self.it.i;
        Some(Value { b: &self.it.b[self.it.i..] })
    }
}

/// Skips white space. The host sends none, so the common case does not
/// enter a loop (every loop iteration also runs the host's deadline check).
#[inline]
pub(crate) fn ws(b: &[u8], i: usize) -> usize {
    if i < b.len() && b[i] <= b' ' {
        ws_loop(b, i)
    } else {
        i
    }
}

#[inline(never)]
fn ws_loop(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

#[inline]
fn hex(c: u8) -> Option<u32> {
    match c {
        b'0'..=b'9' => Some((c - b'0') as u32),
        b'a'..=b'f' => Some((c - b'a' + 10) as u32),
        b'A'..=b'F' => Some((c - b'A' + 10) as u32),
        _ => None,
    }
}

/// Four hex digits at i, unrolled (no loop).
fn hex4(b: &[u8], i: usize) -> Option<u32> {
    if i + 4 > b.len() {
        return None;
    }
    Some(hex(b[i])? << 12 | hex(b[i + 1])? << 8 | hex(b[i + 2])? << 4 | hex(b[i + 3])?)
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The high bit set in each byte of x that may be '"', '\\' or below 0x20;
/// the lowest set byte is always exact.
#[inline]
fn special(x: u64) -> u64 {
    let q = x ^ (LO * b'"' as u64);
    let bs = x ^ (LO * b'\\' as u64);
    ((q.wrapping_sub(LO) & !q) | (bs.wrapping_sub(LO) & !bs) | (x.wrapping_sub(LO * 0x20) & !x)) & HI
}

#[inline]
fn load8(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

/// Skips the string at `i` (b[i] == '"'): (end, has an escape). One loop,
/// 8 bytes a step.
fn skip_string(b: &[u8], i: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    let mut i = i + 1;
    loop {
        if b.len() - i >= 8 {
            let m = special(load8(b, i));
            if m == 0 {
                i += 8;
                continue;
            }
            i += (m.trailing_zeros() >> 3) as usize;
        } else if i >= b.len() {
            return None;
        } else if b[i] != b'"' && b[i] != b'\\' && b[i] >= 0x20 {
            i += 1;
            continue;
        }
        match b[i] {
            b'"' => return Some((i + 1, escaped)),
            b'\\' => {
                escaped = true;
                match *b.get(i + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                    b'u' => {
                        hex4(b, i + 2)?;
                        i += 6;
                    }
                    _ => return None,
                }
            }
            _ => return None, // a control character
        }
    }
}

fn skip_number(b: &[u8], mut i: usize) -> Option<usize> {
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while matches!(b.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        let d = i;
        while matches!(b.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
        if i == d {
            return None;
        }
    }
    if matches!(b.get(i), Some(b'e') | Some(b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+') | Some(b'-')) {
            i += 1;
        }
        let d = i;
        while matches!(b.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
        if i == d {
            return None;
        }
    }
    Some(i)
}

fn literal(b: &[u8], i: usize, lit: &[u8]) -> Option<usize> {
    if b.len() >= i + lit.len() && &b[i..i + lit.len()] == lit {
        Some(i + lit.len())
    } else {
        None
    }
}

/// Validates and skips the value at `i`; `None` if malformed or nested
/// deeper than MAX_DEPTH. Iterative: a deep input cannot blow the stack.
pub(crate) fn skip(b: &[u8], i: usize) -> Option<usize> {
    // Scalars first, without the container machinery.
    match *b.get(i)? {
        b'"' => Some(skip_string(b, i)?.0),
        b't' => literal(b, i, b"true"),
        b'f' => literal(b, i, b"false"),
        b'n' => literal(b, i, b"null"),
        b'{' | b'[' => skip_container(b, i),
        _ => skip_number(b, i),
    }
}

/// skip for an object or array: whether each open container is an object
/// is a bit in a 320-bit set (zeroing MAX_DEPTH bools per call cost more
/// than skipping most values).
fn skip_container(b: &[u8], mut i: usize) -> Option<usize> {
    let mut objects = [0u64; (MAX_DEPTH + 64) / 64];
    let mut depth = 0usize;
    'value: loop {
        // i is at a value.
        match *b.get(i)? {
            c @ (b'{' | b'[') => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return None;
                }
                if c == b'{' {
                    objects[depth / 64] |= 1 << (depth % 64);
                } else {
                    objects[depth / 64] &= !(1 << (depth % 64));
                }
                i = ws(b, i + 1);
                if b.get(i) == Some(if c == b'{' { &b'}' } else { &b']' }) {
                    i += 1;
                    depth -= 1;
                } else if c == b'{' {
                    i = key(b, i)?;
                    continue 'value;
                } else {
                    continue 'value;
                }
            }
            b'"' => i = skip_string(b, i)?.0,
            b't' => i = literal(b, i, b"true")?,
            b'f' => i = literal(b, i, b"false")?,
            b'n' => i = literal(b, i, b"null")?,
            _ => i = skip_number(b, i)?,
        }
        // After a value: close containers or move to the next item.
        loop {
            if depth == 0 {
                return Some(i);
            }
            i = ws(b, i);
            let obj = objects[depth / 64] & (1 << (depth % 64)) != 0;
            match *b.get(i)? {
                b',' => {
                    i = ws(b, i + 1);
                    if obj {
                        i = key(b, i)?;
                    }
                    continue 'value;
                }
                b'}' if obj => {
                    i += 1;
                    depth -= 1;
                }
                b']' if !obj => {
                    i += 1;
                    depth -= 1;
                }
                _ => return None,
            }
        }
    }
}

/// Skips `"key" :` and the white space after it.
fn key(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let i = ws(b, skip_string(b, i)?.0);
    if b.get(i) != Some(&b':') {
        return None;
    }
    Some(ws(b, i + 1))
}

/// Reads the string at `i`: its text and where it ends.
fn string<'a>(b: &'a [u8], i: usize) -> Option<(&'a str, usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let (end, escaped) = skip_string(b, i)?;
    let body = &b[i + 1..end - 1];
    if !escaped {
        return Some((utf8(body), end));
    }
    Some((decode(body), end))
}

/// Borrows valid UTF-8; copies invalid UTF-8 with U+FFFD replacements.
fn utf8(b: &[u8]) -> &str {
    match core::str::from_utf8(b) {
        Ok(s) => s,
        Err(_) => {
            let mut out = Buf::with_capacity(b.len() + 8);
            let mut rest = b;
            loop {
                match core::str::from_utf8(rest) {
                    Ok(s) => {
                        out.push(s.as_bytes());
                        break;
                    }
                    Err(e) => {
                        let (good, bad) = rest.split_at(e.valid_up_to());
                        out.push(good);
                        out.push("\u{FFFD}".as_bytes());
                        rest = &bad[e.error_len().unwrap_or(bad.len())..];
                    }
                }
            }
            // Built only from valid UTF-8.
            unsafe { core::str::from_utf8_unchecked(out.into_bytes()) }
        }
    }
}

/// Decodes a (validated) string body with escapes into the arena. A
/// surrogate that is not part of a pair becomes U+FFFD, and so does invalid
/// UTF-8 (decode_bytes keeps it).
fn decode<'a>(body: &[u8]) -> &'a str {
    // The body was UTF-8 (or is fixed up here) and escapes add valid UTF-8.
    let bytes = decode_bytes(body);
    match core::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(_) => utf8(bytes),
    }
}

fn parse_f64(raw: &[u8]) -> Option<f64> {
    // Enough for integers and simple decimals; exponents are applied by
    // repeated multiplication.
    let mut i = 0;
    let neg = raw.first() == Some(&b'-');
    if neg {
        i += 1;
    }
    let mut v = 0f64;
    while i < raw.len() && raw[i].is_ascii_digit() {
        v = v * 10.0 + (raw[i] - b'0') as f64;
        i += 1;
    }
    if i < raw.len() && raw[i] == b'.' {
        i += 1;
        let mut scale = 0.1;
        while i < raw.len() && raw[i].is_ascii_digit() {
            v += (raw[i] - b'0') as f64 * scale;
            scale /= 10.0;
            i += 1;
        }
    }
    if i < raw.len() && (raw[i] == b'e' || raw[i] == b'E') {
        i += 1;
        let eneg = raw.get(i) == Some(&b'-');
        if matches!(raw.get(i), Some(b'+') | Some(b'-')) {
            i += 1;
        }
        let mut e = 0i32;
        while i < raw.len() && raw[i].is_ascii_digit() {
            e = e.saturating_mul(10).saturating_add((raw[i] - b'0') as i32);
            i += 1;
        }
        for _ in 0..e.min(400) {
            if eneg {
                v /= 10.0;
            } else {
                v *= 10.0;
            }
        }
    }
    Some(if neg { -v } else { v })
}

/// Writes `s` as a JSON string: quotes, backslashes and control characters
/// escaped.
pub(crate) fn write_string(out: &mut Buf, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let b = s.as_bytes();
    out.byte(b'"');
    let mut run = 0;
    let mut i = 0;
    while i < b.len() {
        if b.len() - i >= 8 && special(load8(b, i)) == 0 {
            i += 8; // 8 bytes that need no escape
            continue;
        }
        let c = b[i];
        if c >= 0x20 && c != b'"' && c != b'\\' {
            i += 1;
            continue;
        }
        out.push(&b[run..i]);
        match c {
            b'"' => out.push(b"\\\""),
            b'\\' => out.push(b"\\\\"),
            b'\n' => out.push(b"\\n"),
            b'\t' => out.push(b"\\t"),
            b'\r' => out.push(b"\\r"),
            _ => out.push(&[b'\\', b'u', b'0', b'0', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]),
        }
        i += 1;
        run = i;
    }
    out.push(&b[run..]);
    out.byte(b'"');
}

#[allow(dead_code)]
pub(crate) fn arena_str<'a>(b: &[u8]) -> &'a str {
    let out = arena::bytes(b.len());
    out.copy_from_slice(b);
    utf8(out)
}

// Readers with Go's pdk semantics (bytes, not &str): for plugins that must
// answer exactly as a Go twin does, invalid UTF-8 included. They sit at the
// end of the file so that adding them moved no panic location of the code
// above (which is part of every plugin's data).
impl<'a> Value<'a> {
    /// A string's bytes, escapes decoded (into the arena when there are
    /// any) and invalid UTF-8 kept as it is: what Go's pdk Value.Str
    /// returns. `None` for any other kind or a malformed string.
    pub fn str_bytes(&self) -> Option<&'a [u8]> {
        if self.kind() != Kind::String {
            return None;
        }
        let (end, escaped) = skip_string(self.b, 0)?;
        let body = &self.b[1..end - 1];
        Some(if escaped { decode_bytes(body) } else { body })
    }

    /// Like `get`, but names are compared as bytes after decoding escapes,
    /// without replacing invalid UTF-8: a name matches only if it is
    /// exactly `key` (Go's pdk Value.Get).
    pub fn get_bytes(&self, key: &[u8]) -> Value<'a> {
        self.member(|body, escaped| if escaped { decode_bytes(body) == key } else { body == key })
    }

    /// Like `members`, with names as bytes (escapes decoded, invalid UTF-8
    /// kept, as Go's pdk Value.Members hands them over): no name is
    /// validated as UTF-8, which makes a pass over an object cheaper.
    pub fn members_bytes(&self) -> MembersBytes<'a> {
        MembersBytes { it: Iter::new(self.b, b'{') }
    }

    /// Resolves an RFC 6901 JSON pointer ("/options/path", "/paths/0", ""
    /// for the value itself; "~1" stands for '/' and "~0" for '~') as Go's
    /// pdk Value.Pointer does: object members by `get_bytes`, array
    /// elements by a decimal index as strconv.Atoi reads it (a sign is
    /// allowed and "-0" is 0; other negatives and leading zeros are not).
    pub fn pointer(&self, ptr: &str) -> Value<'a> {
        let mut rest = ptr.as_bytes();
        if rest.is_empty() {
            return *self;
        }
        if rest[0] != b'/' {
            return Value::default();
        }
        let mut cur = *self;
        while !rest.is_empty() && cur.exists() {
            rest = &rest[1..];
            let end = rest.iter().position(|&c| c == b'/').unwrap_or(rest.len());
            let mut tok = &rest[..end];
            rest = &rest[end..];
            if tok.contains(&b'~') {
                tok = unescape_pointer(tok);
            }
            cur = match cur.kind() {
                Kind::Object => cur.get_bytes(tok),
                Kind::Array => match pointer_index(tok) {
                    Some(i) => cur.index(i),
                    None => return Value::default(),
                },
                _ => return Value::default(),
            };
        }
        cur
    }
}

/// Iterator over an object's members: (name bytes, value).
pub struct MembersBytes<'a> {
    it: Iter<'a>,
}

impl<'a> MembersBytes<'a> {
    /// Whether the iteration stopped at malformed input.
    pub fn bad(&self) -> bool {
        self.it.bad
    }
}

impl<'a> Iterator for MembersBytes<'a> {
    type Item = (&'a [u8], Value<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if !self.it.step() {
            return None;
        }
        let (b, i) = (self.it.b, self.it.i);
        let (end, escaped) = match if b.get(i) == Some(&b'"') { skip_string(b, i) } else { None } {
            Some(x) => x,
            None => {
                self.it.fail();
                return None;
            }
        };
        let j = ws(b, end);
        if b.get(j) != Some(&b':') {
            self.it.fail();
            return None;
        }
        let j = ws(b, j + 1);
        self.it.val = j;
        self.it.i = j;
        let body = &b[i + 1..end - 1];
        Some((if escaped { decode_bytes(body) } else { body }, Value { b: &b[j..] }))
    }
}

/// Decodes a (validated) string body with escapes into the arena, leaving
/// invalid UTF-8 of the body as it is (decode repairs it). A surrogate
/// that is not part of a pair becomes U+FFFD.
fn decode_bytes<'a>(body: &[u8]) -> &'a [u8] {
    crate::abi::check_decode(body);
    let mut out = Buf::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let start = i;
        while i < body.len() && body[i] != b'\\' {
            i += 1;
        }
        out.push(&body[start..i]);
        if i >= body.len() {
            break;
        }
        let c = body[i + 1];
        i += 2;
        let ch = match c {
            b'b' => 8,
            b'f' => 12,
            b'n' => b'\n' as u32,
            b'r' => b'\r' as u32,
            b't' => b'\t' as u32,
            b'u' => {
                let mut r = hex4(body, i).unwrap_or(0xFFFD);
                i += 4;
                if (0xD800..0xE000).contains(&r) {
                    if r < 0xDC00 && body.get(i) == Some(&b'\\') && body.get(i + 1) == Some(&b'u') {
                        if let Some(r2) = hex4(body, i + 2) {
                            if (0xDC00..0xE000).contains(&r2) {
                                r = 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00);
                                i += 6;
                            }
                        }
                    }
                    if (0xD800..0xE000).contains(&r) {
                        r = 0xFFFD;
                    }
                }
                r
            }
            other => other as u32, // '"', '\\', '/'
        };
        let mut tmp = [0u8; 4];
        let s = char::from_u32(ch).unwrap_or('\u{FFFD}').encode_utf8(&mut tmp);
        out.push(s.as_bytes());
    }
    out.into_bytes()
}

/// A pointer token with "~0" and "~1" decoded (into the arena); any other
/// '~' stays.
fn unescape_pointer<'a>(tok: &[u8]) -> &'a [u8] {
    let mut out = Buf::with_capacity(tok.len());
    let mut i = 0;
    while i < tok.len() {
        if tok[i] == b'~' && i + 1 < tok.len() && (tok[i + 1] == b'0' || tok[i + 1] == b'1') {
            out.byte(if tok[i + 1] == b'0' { b'~' } else { b'/' });
            i += 2;
        } else {
            out.byte(tok[i]);
            i += 1;
        }
    }
    out.into_bytes()
}

/// An array index of a pointer, as Go's pdk reads it with strconv.Atoi.
fn pointer_index(tok: &[u8]) -> Option<usize> {
    let (neg, digits) = match tok.first() {
        Some(b'-') => (true, &tok[1..]),
        Some(b'+') => (false, &tok[1..]),
        _ => (false, tok),
    };
    if digits.is_empty() || tok.len() > 1 && tok[0] == b'0' {
        return None;
    }
    let mut n: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        // No array reaches past u32; saturate long before u64 would wrap.
        n = (n * 10 + (c - b'0') as u64).min(1 << 40);
    }
    if neg && n != 0 || n > u32::MAX as u64 {
        return None;
    }
    Some(n as usize)
}

impl<'a> Value<'a> {
    /// The first member of an object whose raw name (between the quotes;
    /// `escaped` when it holds escapes) `is` accepts, or a missing value:
    /// the loop of `get` and `get_bytes`.
    #[inline]
    fn member(&self, is: impl Fn(&[u8], bool) -> bool) -> Value<'a> {
        let mut it = Iter::new(self.b, b'{');
        while it.step() {
            let (b, i) = (it.b, it.i);
            if b.get(i) != Some(&b'"') {
                break;
            }
            let (end, escaped) = match skip_string(b, i) {
                Some(x) => x,
                None => break,
            };
            let j = ws(b, end);
            if b.get(j) != Some(&b':') {
                break;
            }
            let j = ws(b, j + 1);
            it.val = j;
            let body = &b[i + 1..end - 1];
            if is(body, escaped) {
                return Value { b: &b[j..] };
            }
        }
        Value::default()
    }
}
