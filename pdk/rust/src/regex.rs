//! Regular expressions in Go's RE2 syntax, as regexp.Compile reads it
//! (regexp/syntax with the Perl flags), matched by simulating a Thompson
//! NFA over a compiled program. Matching takes time linear in the subject
//! (times the program's size) whatever the pattern, so a pattern from config
//! is safe to run on arguments chosen by whoever drives the agent: there is
//! no backtracking.
//!
//! ```ignore
//! use toolwarden_pdk::regex;
//! // In configure, whose allocations live as long as the instance:
//! let re = regex::compile(cfg.get("deny").str().unwrap_or(""), alloc)
//!     .map_err(|e| Error::bad_config(e.message(alloc)))?;
//! // In check:
//! if re.is_match(cmd.as_bytes()) { /* ... */ }
//! ```
//!
//! Patterns are compiled in configure (the program lives for the instance);
//! the matcher's scratch space is shared by every pattern of the instance.
//! The parser follows Go's regexp/syntax/parse.go step for step, so a
//! pattern is accepted or refused as Go does and a refusal carries Go's
//! text. Only "does it match anywhere" is answered: captures, greediness and
//! positions are parsed and then ignored. argguard builds with this engine,
//! and its differential fuzz tests hold it to Go's regexp; the vectors every kit passes are pdk/testdata/regex.json.
//!
//! Supported: literals and escapes (\t \n \r \f \v \a, \123 octal, \x41,
//! \x{263a}, \Q...\E, escaped punctuation); `.`; classes with ranges and
//! negation; \d \s \w \D \S \W and [[:alpha:]]-style POSIX classes (ASCII,
//! as in Go); ^ $ \A \z \b \B; (...), (?:...), (?P<name>...), (?<name>...);
//! alternation; * + ? {n} {n,} {n,m} and their lazy forms; the flags i m s
//! U in (?flags) and (?flags:...), with "-" to clear; Go's repeat limit of
//! 1000. Subjects are UTF-8 as Go reads them: `.` and classes match one code
//! point, and each byte of invalid UTF-8 is one U+FFFD. (?i) folds case with
//! Go's unicode.SimpleFold (the table in fold.rs is generated from Go's).
//!
//! Unsupported, refused at configure (Go accepts them): the Unicode classes
//! \pL, \p{Greek}, \PN, also inside brackets; their tables would outweigh
//! the rest of the module.
//!
//! Known differences from Go, both about giant patterns:
//! - Go refuses a pattern whose program would pass about 3.3 million
//!   instructions ("expression too large"); this engine refuses one past
//!   MAX_INSTS instructions, with its own message.
//! - Go refuses a parse tree higher than 1000 ("expression nests too
//!   deeply"); the height here is that of this parser's tree, which does not
//!   merge literals or factor alternations as Go's does, so a pattern within
//!   a few levels of the limit (or a huge alternation that Go's factoring
//!   nests) may be judged differently.

use crate::regex_fold::{FOLD, MAX_FOLD, MIN_FOLD};
use crate::regex_vec::Vec;
use crate::Alloc;

/// The most instructions a compiled pattern may have (a 1000-fold repeat of
/// a 65-instruction group).
pub const MAX_INSTS: usize = 1 << 16;

pub enum Error {
    /// A pattern Go refuses: Go's error code text and the offending part.
    Syntax(&'static str, &'static str),
    /// Syntax Go accepts and this engine does not implement.
    Unsupported(&'static str),
    /// The program would pass MAX_INSTS.
    TooLarge,
}

impl Error {
    /// The refusal as text, in Go's words where Go refuses the pattern too:
    /// "error parsing regexp: missing closing ): `((`".
    pub fn message<'a>(&self, alloc: Alloc<'a>) -> &'a str {
        match *self {
            Error::Syntax(code, expr) => alloc.concat(&["error parsing regexp: ", code, ": `", expr, "`"]),
            Error::Unsupported(seq) => alloc.concat(&[
                seq,
                " is not supported: the regexp engine has no Unicode classes (write the ranges out, e.g. [\\x{370}-\\x{3ff}])",
            ]),
            Error::TooLarge => alloc.concat(&[
                "pattern too large: the regexp engine compiles at most 65536 instructions (counted repeats such as {1000} are expanded)",
            ]),
        }
    }
}

// Go's error codes (regexp/syntax.ErrorCode).
const ERR_INVALID_CHAR_RANGE: &str = "invalid character class range";
const ERR_INVALID_ESCAPE: &str = "invalid escape sequence";
const ERR_INVALID_NAMED_CAPTURE: &str = "invalid named capture";
const ERR_INVALID_PERL_OP: &str = "invalid or unsupported Perl syntax";
const ERR_INVALID_REPEAT_OP: &str = "invalid nested repetition operator";
const ERR_INVALID_REPEAT_SIZE: &str = "invalid repeat count";
const ERR_MISSING_BRACKET: &str = "missing closing ]";
const ERR_MISSING_PAREN: &str = "missing closing )";
const ERR_MISSING_REPEAT_ARGUMENT: &str = "missing argument to repetition operator";
const ERR_TRAILING_BACKSLASH: &str = "trailing backslash at end of expression";
const ERR_UNEXPECTED_PAREN: &str = "unexpected )";
const ERR_NESTING_DEPTH: &str = "expression nests too deeply";

// Parse flags, numbered as Go's syntax.Flags. PerlX and UnicodeGroups are
// always on (regexp.Compile), so they are not tested.
const FOLD_CASE: u32 = 1;
const DOT_NL: u32 = 8;
const ONE_LINE: u32 = 16;
const NON_GREEDY: u32 = 32;
const PERL: u32 = 4 | ONE_LINE | 64 | 128; // ClassNL | OneLine | PerlX | UnicodeGroups

// Empty-width assertions, numbered as Go's syntax.EmptyOp.
const BEGIN_LINE: u8 = 1;
const END_LINE: u8 = 2;
const BEGIN_TEXT: u8 = 4;
const END_TEXT: u8 = 8;
const WORD_BOUNDARY: u8 = 16;
const NO_WORD_BOUNDARY: u8 = 32;

const MAX_RUNE: u32 = 0x10FFFF;
const NONE: u32 = u32::MAX;

// Parse tree operators. LEFT_PAREN and VERTICAL_BAR live only on the parse
// stack, as in Go.
const EMPTY: u8 = 0;
const CHAR: u8 = 1; // a: the code point
const CLASS: u8 = 2; // pool[a..a+b]: sorted, disjoint [lo, hi] pairs
const ANY_NOT_NL: u8 = 3;
const ANY: u8 = 4;
const ASSERT: u8 = 5; // a: an empty-width flag
const CONCAT: u8 = 6; // children: sub, then next links
const ALTERNATE: u8 = 7;
const STAR: u8 = 8; // sub
const PLUS: u8 = 9;
const QUEST: u8 = 10;
const REPEAT: u8 = 11; // a: min, b: max (-1: none)
const CAPTURE: u8 = 12;
const NO_MATCH: u8 = 13;
const LEFT_PAREN: u8 = 14; // a: the flags to restore, b: 1 if capturing
const VERTICAL_BAR: u8 = 15;

#[derive(Clone, Copy)]
struct Node {
    op: u8,
    a: u32,
    b: u32,
    sub: u32,
    next: u32,
}

/// A compiled pattern. Copy it freely: the program lives in the arena for
/// the life of the instance.
#[derive(Clone, Copy)]
pub struct Regex {
    prog: &'static [Inst],
    classes: &'static [Class],
    ranges: &'static [u32],
    /// Every match starts at the beginning of the text.
    anchored: bool,
    /// Every match starts with this ASCII byte (0x100: no such byte).
    first: u32,
    /// Or: every match starts with a byte in this set (all of 0x80-0xFF or
    /// none of them), and skip says so.
    starts: [u32; 8],
    skip: bool,
}

impl Regex {
    /// A placeholder that is never matched.
    pub const EMPTY: Regex =
        Regex { prog: &[], classes: &[], ranges: &[], anchored: false, first: 0x100, starts: [0; 8], skip: false };
}

/// Jumps are relative to the instruction, so a compiled block can be
/// copied as is (x{3} is three copies of x).
#[derive(Clone, Copy)]
enum Inst {
    Match,
    Fail,
    Char(u32),
    Class(u32),
    Any,
    AnyNotNL,
    Assert(u8),
    Jmp(i32),
    Split(i32, i32),
}

/// A class as matched: a bitmap for ASCII, ranges[lo..hi] for the rest.
#[derive(Clone, Copy)]
struct Class {
    ascii: [u32; 4],
    lo: u32,
    hi: u32,
}

/// Compiles a pattern as Go's regexp.Compile would read it.
pub fn compile(pattern: &'static str, alloc: Alloc<'static>) -> Result<Regex, Error> {
    let mut p = Parser {
        flags: PERL,
        whole: pattern,
        nodes: Vec::new(alloc),
        stack: Vec::new(alloc),
        pool: Vec::new(alloc),
        tmp: Vec::new(alloc),
        tmp2: Vec::new(alloc),
        work: Vec::new(alloc),
    };
    let root = p.parse(pattern)?;
    p.check_height(root)?;
    let mut c = Compiler {
        nodes: p.nodes.as_slice(),
        pool: p.pool.as_slice(),
        out: Vec::new(alloc),
        classes: Vec::new(alloc),
        ranges: Vec::new(alloc),
        frames: Vec::new(alloc),
    };
    c.tree(root)?;
    c.emit(Inst::Match)?;
    let prog = c.out.into_static();
    reserve(alloc, prog.len());
    let mut re = Regex {
        prog,
        classes: c.classes.into_static(),
        ranges: c.ranges.into_static(),
        anchored: matches!(prog[0], Inst::Assert(f) if f & BEGIN_TEXT != 0),
        first: match prog[0] {
            Inst::Char(c) if c < 0x80 => c,
            _ => 0x100,
        },
        starts: [0; 8],
        skip: false,
    };
    re.first_bytes(alloc);
    Ok(re)
}

struct Parser {
    flags: u32,
    whole: &'static str,
    nodes: Vec<Node>,
    stack: Vec<u32>,
    pool: Vec<u32>,
    // Class under construction, and scratch for folding a group.
    tmp: Vec<u32>,
    tmp2: Vec<u32>,
    work: Vec<(u32, u32)>,
}

impl Parser {
    fn node(&mut self, op: u8, a: u32, b: u32, sub: u32) -> u32 {
        self.nodes.push(Node { op, a, b, sub, next: NONE });
        (self.nodes.len() - 1) as u32
    }

    fn op(&mut self, op: u8, a: u32) {
        let n = self.node(op, a, 0, NONE);
        self.stack.push(n);
    }

    fn is_pseudo(&self, n: u32) -> bool {
        self.nodes[n as usize].op >= LEFT_PAREN
    }

    /// Go's parse: the main loop.
    fn parse(&mut self, s: &'static str) -> Result<u32, Error> {
        let mut t = s;
        let mut last_repeat: &'static str = "";
        while !t.is_empty() {
            let mut repeat: &'static str = "";
            let b = t.as_bytes();
            match b[0] {
                b'(' if b.len() >= 2 && b[1] == b'?' => t = self.parse_perl_flags(t)?,
                b'(' => {
                    let n = self.node(LEFT_PAREN, self.flags, 1, NONE);
                    self.stack.push(n);
                    t = &t[1..];
                }
                b'|' => {
                    self.parse_vertical_bar();
                    t = &t[1..];
                }
                b')' => {
                    self.parse_right_paren()?;
                    t = &t[1..];
                }
                b'^' => {
                    self.op(ASSERT, if self.flags & ONE_LINE != 0 { BEGIN_TEXT } else { BEGIN_LINE } as u32);
                    t = &t[1..];
                }
                b'$' => {
                    self.op(ASSERT, if self.flags & ONE_LINE != 0 { END_TEXT } else { END_LINE } as u32);
                    t = &t[1..];
                }
                b'.' => {
                    self.op(if self.flags & DOT_NL != 0 { ANY } else { ANY_NOT_NL }, 0);
                    t = &t[1..];
                }
                b'[' => t = self.parse_class(t)?,
                c @ (b'*' | b'+' | b'?') => {
                    let op = match c {
                        b'*' => STAR,
                        b'+' => PLUS,
                        _ => QUEST,
                    };
                    repeat = t;
                    t = self.repeat(op, 0, 0, t, &t[1..], last_repeat)?;
                }
                b'{' => match parse_repeat(t) {
                    None => {
                        // Not a repeat: '{' is a literal.
                        self.literal('{' as u32);
                        t = &t[1..];
                    }
                    Some((min, max, after)) => {
                        if min < 0 || min > 1000 || max > 1000 || max >= 0 && min > max {
                            return Err(Error::Syntax(ERR_INVALID_REPEAT_SIZE, &t[..t.len() - after.len()]));
                        }
                        repeat = t;
                        t = self.repeat(REPEAT, min, max, t, after, last_repeat)?;
                    }
                },
                b'\\' => t = self.parse_backslash(t)?,
                _ => {
                    let c = t.chars().next().unwrap_or('\0');
                    self.literal(c as u32);
                    t = &t[c.len_utf8()..];
                }
            }
            last_repeat = repeat;
        }
        self.concat();
        if self.swap_vertical_bar() {
            self.stack.pop();
        }
        self.alternate();
        if self.stack.len() != 1 {
            return Err(Error::Syntax(ERR_MISSING_PAREN, s));
        }
        Ok(self.stack[0])
    }

    /// A literal code point, or with (?i) the class of its case folds.
    fn literal(&mut self, r: u32) {
        if self.flags & FOLD_CASE != 0 && simple_fold(r) != r {
            self.tmp.clear();
            append_folded_range(&mut self.tmp, r, r);
            self.push_class(false);
        } else {
            self.op(CHAR, r);
        }
    }

    /// Pushes self.tmp (cleaned, maybe negated) as a class.
    fn push_class(&mut self, negate: bool) {
        clean_class(&mut self.tmp);
        if negate {
            negate_class(&mut self.tmp);
        }
        let start = self.pool.len() as u32;
        self.pool.extend_from_slice(self.tmp.as_slice());
        let n = self.node(CLASS, start, self.tmp.len() as u32, NONE);
        self.stack.push(n);
    }

    /// Go's repeat: applies op to the top of the stack.
    fn repeat(
        &mut self,
        op: u8,
        min: i32,
        max: i32,
        before: &'static str,
        after: &'static str,
        last_repeat: &'static str,
    ) -> Result<&'static str, Error> {
        let mut after = after;
        if after.as_bytes().first() == Some(&b'?') {
            after = &after[1..]; // lazy: the same for a yes/no match
        }
        if !last_repeat.is_empty() {
            // a** is a syntax error in Perl and in Go.
            return Err(Error::Syntax(ERR_INVALID_REPEAT_OP, &last_repeat[..last_repeat.len() - after.len()]));
        }
        let n = self.stack.len();
        if n == 0 || self.is_pseudo(self.stack[n - 1]) {
            return Err(Error::Syntax(ERR_MISSING_REPEAT_ARGUMENT, &before[..before.len() - after.len()]));
        }
        let re = self.node(op, min as u32, max as u32, self.stack[n - 1]);
        self.stack[n - 1] = re;
        if op == REPEAT && (min >= 2 || max >= 2) && !self.repeat_is_valid(re, 1000) {
            return Err(Error::Syntax(ERR_INVALID_REPEAT_SIZE, &before[..before.len() - after.len()]));
        }
        Ok(after)
    }

    /// Go's repeatIsValid: nested counted repeats multiply to at most n
    /// copies of the innermost thing. Walked with a work list, not recursion.
    fn repeat_is_valid(&mut self, re: u32, n: u32) -> bool {
        self.work.clear();
        self.work.push((re, n));
        while let Some((re, mut n)) = self.work.pop() {
            let nd = self.nodes[re as usize];
            if nd.op == REPEAT {
                let mut m = nd.b as i32;
                if m == 0 {
                    continue;
                }
                if m < 0 {
                    m = nd.a as i32;
                }
                if m as u32 > n {
                    return false;
                }
                if m > 0 {
                    n /= m as u32;
                }
            }
            self.push_children(re, n);
        }
        true
    }

    /// Pushes re's children on the work list, each with v.
    fn push_children(&mut self, re: u32, v: u32) {
        let nd = self.nodes[re as usize];
        match nd.op {
            CONCAT | ALTERNATE => {
                let mut c = nd.sub;
                while c != NONE {
                    self.work.push((c, v));
                    c = self.nodes[c as usize].next;
                }
            }
            STAR | PLUS | QUEST | REPEAT | CAPTURE => self.work.push((nd.sub, v)),
            _ => {}
        }
    }

    /// Go's checkHeight, on this parser's tree (see the file comment).
    fn check_height(&mut self, root: u32) -> Result<(), Error> {
        if self.nodes.len() < 1000 {
            return Ok(());
        }
        self.work.clear();
        self.work.push((root, 1));
        while let Some((re, h)) = self.work.pop() {
            if h > 1000 {
                return Err(Error::Syntax(ERR_NESTING_DEPTH, self.whole));
            }
            self.push_children(re, h + 1);
        }
        Ok(())
    }

    /// The index of the first stack entry above the topmost '(' or '|'.
    fn above_pseudo(&self) -> usize {
        let mut i = self.stack.len();
        while i > 0 && !self.is_pseudo(self.stack[i - 1]) {
            i -= 1;
        }
        i
    }

    /// Replaces the top of the stack (above '|' or '(') with its concatenation.
    fn concat(&mut self) {
        let i = self.above_pseudo();
        let n = if i == self.stack.len() { self.node(EMPTY, 0, 0, NONE) } else { self.collapse(i, CONCAT) };
        self.stack.truncate(i);
        self.stack.push(n);
    }

    /// Replaces the top of the stack (above '(') with its alternation.
    fn alternate(&mut self) {
        let i = self.above_pseudo();
        let n = if i == self.stack.len() { self.node(NO_MATCH, 0, 0, NONE) } else { self.collapse(i, ALTERNATE) };
        self.stack.truncate(i);
        self.stack.push(n);
    }

    /// One op node over stack[i..], hoisting the children of op nodes.
    fn collapse(&mut self, i: usize, op: u8) -> u32 {
        if self.stack.len() - i == 1 {
            return self.stack[i];
        }
        let parent = self.node(op, 0, 0, NONE);
        let mut last = NONE;
        for k in i..self.stack.len() {
            let s = self.stack[k];
            let (mut c, list) =
                if self.nodes[s as usize].op == op { (self.nodes[s as usize].sub, true) } else { (s, false) };
            while c != NONE {
                let next = if list { self.nodes[c as usize].next } else { NONE };
                self.nodes[c as usize].next = NONE;
                if last == NONE {
                    self.nodes[parent as usize].sub = c;
                } else {
                    self.nodes[last as usize].next = c;
                }
                last = c;
                c = next;
            }
        }
        parent
    }

    fn parse_vertical_bar(&mut self) {
        self.concat();
        if !self.swap_vertical_bar() {
            self.op(VERTICAL_BAR, 0);
        }
    }

    /// Go's swapVerticalBar: moves the alternative just parsed below the
    /// '|' above the earlier ones. (Go also merges single characters into a
    /// class here, which changes nothing a match can tell.)
    fn swap_vertical_bar(&mut self) -> bool {
        let n = self.stack.len();
        if n >= 2 && self.nodes[self.stack[n - 2] as usize].op == VERTICAL_BAR {
            let s = self.stack.as_mut_slice();
            s.swap(n - 2, n - 1);
            return true;
        }
        false
    }

    fn parse_right_paren(&mut self) -> Result<(), Error> {
        self.concat();
        if self.swap_vertical_bar() {
            self.stack.pop();
        }
        self.alternate();
        let n = self.stack.len();
        if n < 2 {
            return Err(Error::Syntax(ERR_UNEXPECTED_PAREN, self.whole));
        }
        let (re1, re2) = (self.stack[n - 1], self.nodes[self.stack[n - 2] as usize]);
        self.stack.truncate(n - 2);
        if re2.op != LEFT_PAREN {
            return Err(Error::Syntax(ERR_UNEXPECTED_PAREN, self.whole));
        }
        self.flags = re2.a;
        let n = if re2.b != 0 { self.node(CAPTURE, 0, 0, re1) } else { re1 };
        self.stack.push(n);
        Ok(())
    }

    /// Go's parsePerlFlags: (?i), (?i:...), (?P<name>...), (?<name>...).
    fn parse_perl_flags(&mut self, s: &'static str) -> Result<&'static str, Error> {
        let b = s.as_bytes();
        let starts_with_p = b.len() > 4 && b[2] == b'P' && b[3] == b'<';
        let starts_with_name = b.len() > 3 && b[2] == b'<';
        if starts_with_p || starts_with_name {
            let expr_start = if starts_with_name { 3 } else { 4 };
            let end = match find(s, b">") {
                Some(e) => e,
                None => return Err(Error::Syntax(ERR_INVALID_NAMED_CAPTURE, s)),
            };
            let name = &s[expr_start..end];
            if name.is_empty() || !name.bytes().all(|c| c == b'_' || c.is_ascii_alphanumeric()) {
                return Err(Error::Syntax(ERR_INVALID_NAMED_CAPTURE, &s[..end + 1]));
            }
            let n = self.node(LEFT_PAREN, self.flags, 1, NONE);
            self.stack.push(n);
            return Ok(&s[end + 1..]);
        }
        let mut t = &s[2..];
        let mut flags = self.flags;
        let mut negated = false;
        let mut saw_flag = false;
        while let Some(c) = t.chars().next() {
            t = &t[c.len_utf8()..];
            match c {
                'i' => flags |= FOLD_CASE,
                'm' => flags &= !ONE_LINE,
                's' => flags |= DOT_NL,
                'U' => flags |= NON_GREEDY,
                '-' if !negated => {
                    // Invert flags so that the sets above clear, and back.
                    negated = true;
                    flags = !flags;
                    saw_flag = false;
                    continue;
                }
                ':' | ')' => {
                    if negated {
                        if !saw_flag {
                            break;
                        }
                        flags = !flags;
                    }
                    if c == ':' {
                        let n = self.node(LEFT_PAREN, self.flags, 0, NONE);
                        self.stack.push(n);
                    }
                    self.flags = flags;
                    return Ok(t);
                }
                _ => break,
            }
            saw_flag = true;
        }
        Err(Error::Syntax(ERR_INVALID_PERL_OP, &s[..s.len() - t.len()]))
    }

    /// A backslash outside a class: an assertion, \Q...\E, a Perl class or
    /// an escaped character.
    fn parse_backslash(&mut self, t: &'static str) -> Result<&'static str, Error> {
        let b = t.as_bytes();
        if b.len() >= 2 {
            let assert = match b[1] {
                b'A' => BEGIN_TEXT,
                b'b' => WORD_BOUNDARY,
                b'B' => NO_WORD_BOUNDARY,
                b'z' => END_TEXT,
                _ => 0,
            };
            if assert != 0 {
                self.op(ASSERT, assert as u32);
                return Ok(&t[2..]);
            }
            match b[1] {
                b'C' => return Err(Error::Syntax(ERR_INVALID_ESCAPE, &t[..2])), // any byte: Go refuses it
                b'Q' => {
                    let rest = &t[2..];
                    let (lit, after) = match find(rest, b"\\E") {
                        Some(i) => (&rest[..i], &rest[i + 2..]),
                        None => (rest, ""),
                    };
                    for c in lit.chars() {
                        self.literal(c as u32);
                    }
                    return Ok(after);
                }
                b'p' | b'P' => return Err(Error::Unsupported(unicode_class(t))),
                _ => {}
            }
            if let Some((sign, class)) = perl_group(b[1]) {
                self.tmp.clear();
                self.append_group(sign, class);
                self.push_class(false);
                return Ok(&t[2..]);
            }
        }
        let (c, rest) = parse_escape(t)?;
        self.literal(c);
        Ok(rest)
    }

    /// Go's parseClass: [...] at the start of s.
    fn parse_class(&mut self, s: &'static str) -> Result<&'static str, Error> {
        let mut t = &s[1..];
        self.tmp.clear();
        let negate = t.starts_with('^');
        if negate {
            t = &t[1..]; // ClassNL is on: \n needs no special case
        }
        let mut first = true; // ']' is a literal first
        while t.is_empty() || !t.starts_with(']') || first {
            first = false;
            if t.len() > 2 && t.starts_with("[:") {
                if let Some(rest) = self.parse_named_class(t)? {
                    t = rest;
                    continue;
                }
            }
            let b = t.as_bytes();
            if b.len() >= 2 && b[0] == b'\\' {
                if b[1] == b'p' || b[1] == b'P' {
                    return Err(Error::Unsupported(unicode_class(t)));
                }
                if let Some((sign, class)) = perl_group(b[1]) {
                    self.append_group(sign, class);
                    t = &t[2..];
                    continue;
                }
            }
            let rng = t;
            let (lo, rest) = parse_class_char(t, s)?;
            t = rest;
            let mut hi = lo;
            // [a-] means a or -.
            if t.len() >= 2 && t.starts_with('-') && !t[1..].starts_with(']') {
                let (h, rest) = parse_class_char(&t[1..], s)?;
                t = rest;
                hi = h;
                if hi < lo {
                    return Err(Error::Syntax(ERR_INVALID_CHAR_RANGE, &rng[..rng.len() - t.len()]));
                }
            }
            if self.flags & FOLD_CASE == 0 {
                append_range(&mut self.tmp, lo, hi);
            } else {
                append_folded_range(&mut self.tmp, lo, hi);
            }
        }
        self.push_class(negate);
        Ok(&t[1..])
    }

    /// Go's parseNamedClass: [:alpha:] and [:^alpha:] at the start of s.
    fn parse_named_class(&mut self, s: &'static str) -> Result<Option<&'static str>, Error> {
        let i = match find(&s[2..], b":]") {
            Some(i) => i + 2,
            None => return Ok(None),
        };
        let name = &s[..i + 2];
        let (neg, n) = match name.strip_prefix("[:^") {
            Some(n) => (true, n),
            None => (false, &name[2..]),
        };
        let class: &'static [u32] = match &n[..n.len() - 2] {
            "alnum" => &[0x30, 0x39, 0x41, 0x5a, 0x61, 0x7a],
            "alpha" => &[0x41, 0x5a, 0x61, 0x7a],
            "ascii" => &[0x0, 0x7f],
            "blank" => &[0x9, 0x9, 0x20, 0x20],
            "cntrl" => &[0x0, 0x1f, 0x7f, 0x7f],
            "digit" => &DIGIT,
            "graph" => &[0x21, 0x7e],
            "lower" => &[0x61, 0x7a],
            "print" => &[0x20, 0x7e],
            "punct" => &[0x21, 0x2f, 0x3a, 0x40, 0x5b, 0x60, 0x7b, 0x7e],
            "space" => &[0x9, 0xd, 0x20, 0x20],
            "upper" => &[0x41, 0x5a],
            "word" => &WORD,
            "xdigit" => &[0x30, 0x39, 0x41, 0x46, 0x61, 0x66],
            _ => return Err(Error::Syntax(ERR_INVALID_CHAR_RANGE, name)),
        };
        self.append_group(if neg { -1 } else { 1 }, class);
        Ok(Some(&s[i + 2..]))
    }

    /// Go's appendGroup: adds a Perl or POSIX class to self.tmp.
    fn append_group(&mut self, sign: i32, class: &[u32]) {
        if self.flags & FOLD_CASE == 0 {
            if sign < 0 {
                append_negated_class(&mut self.tmp, class);
            } else {
                append_class(&mut self.tmp, class);
            }
            return;
        }
        self.tmp2.clear();
        let mut i = 0;
        while i < class.len() {
            append_folded_range(&mut self.tmp2, class[i], class[i + 1]);
            i += 2;
        }
        clean_class(&mut self.tmp2);
        if sign < 0 {
            append_negated_class(&mut self.tmp, self.tmp2.as_slice());
        } else {
            append_class(&mut self.tmp, self.tmp2.as_slice());
        }
    }
}

const DIGIT: [u32; 2] = [0x30, 0x39];
const WORD: [u32; 8] = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];

/// \d \s \w and their negations.
fn perl_group(c: u8) -> Option<(i32, &'static [u32])> {
    let class: &'static [u32] = match c.to_ascii_lowercase() {
        b'd' => &DIGIT,
        b's' => &[0x9, 0xa, 0xc, 0xd, 0x20, 0x20],
        b'w' => &WORD,
        _ => return None,
    };
    Some((if c.is_ascii_uppercase() { -1 } else { 1 }, class))
}

/// The \p sequence at the start of t, for the error message.
fn unicode_class(t: &'static str) -> &'static str {
    let end = if t[2..].starts_with('{') {
        find(t, b"}").map_or(t.len(), |i| i + 1)
    } else {
        t[2..].chars().next().map_or(2, |c| 2 + c.len_utf8())
    };
    &t[..end]
}

/// The byte index of the first needle in s.
fn find(s: &str, needle: &[u8]) -> Option<usize> {
    s.as_bytes().windows(needle.len()).position(|w| w == needle)
}

/// Go's parseRepeat: {min}, {min,} (max -1) or {min,max} at the start of s
/// and what follows; None if s does not start so; min -1 if a number is too
/// big.
fn parse_repeat(s: &'static str) -> Option<(i32, i32, &'static str)> {
    let b = s.as_bytes();
    let (mut min, mut i) = parse_int(b, 1)?;
    let max;
    if i >= b.len() {
        return None;
    }
    if b[i] != b',' {
        max = min;
    } else {
        i += 1;
        if i >= b.len() {
            return None;
        }
        if b[i] == b'}' {
            max = -1;
        } else {
            let (m, j) = parse_int(b, i)?;
            i = j;
            max = m;
            if max < 0 {
                min = -1;
            }
        }
    }
    if i >= b.len() || b[i] != b'}' {
        return None;
    }
    Some((min, max, &s[i + 1..]))
}

/// Go's parseInt: decimal digits without a leading zero; -1 past 10^8.
fn parse_int(b: &[u8], i: usize) -> Option<(i32, usize)> {
    if i >= b.len() || !b[i].is_ascii_digit() || b[i] == b'0' && b.len() > i + 1 && b[i + 1].is_ascii_digit() {
        return None;
    }
    let mut j = i;
    let mut n: i32 = 0;
    while j < b.len() && b[j].is_ascii_digit() {
        if n >= 0 {
            n = if n >= 100_000_000 { -1 } else { n * 10 + (b[j] - b'0') as i32 };
        }
        j += 1;
    }
    Some((n, j))
}

/// Go's parseClassChar: one character of a class, maybe escaped.
fn parse_class_char(s: &'static str, whole_class: &'static str) -> Result<(u32, &'static str), Error> {
    match s.chars().next() {
        None => Err(Error::Syntax(ERR_MISSING_BRACKET, whole_class)),
        Some('\\') => parse_escape(s),
        Some(c) => Ok((c as u32, &s[c.len_utf8()..])),
    }
}

/// Go's parseEscape: the escaped character at the start of s (a '\\').
fn parse_escape(s: &'static str) -> Result<(u32, &'static str), Error> {
    let mut t = &s[1..];
    let c = match t.chars().next() {
        Some(c) => c,
        None => return Err(Error::Syntax(ERR_TRAILING_BACKSLASH, "")),
    };
    t = &t[c.len_utf8()..];
    let octal = |t: &str| t.as_bytes().first().map_or(false, |d| (b'0'..=b'7').contains(d));
    let r = match c {
        // \1 alone is a backreference, which RE2 does not have.
        '1'..='7' if !octal(t) => None,
        '0'..='7' => {
            let mut r = c as u32 - '0' as u32;
            for _ in 1..3 {
                if !octal(t) {
                    break;
                }
                r = r * 8 + (t.as_bytes()[0] - b'0') as u32;
                t = &t[1..];
            }
            Some(r)
        }
        'x' => match t.chars().next() {
            None => None,
            Some('{') => {
                t = &t[1..];
                // One or more hex digits in braces, at most MAX_RUNE.
                let mut r = 0u32;
                let mut n = 0;
                loop {
                    let c = match t.chars().next() {
                        Some(c) => c,
                        None => break None,
                    };
                    t = &t[c.len_utf8()..];
                    if c == '}' {
                        break if n > 0 { Some(r) } else { None };
                    }
                    match c.to_digit(16) {
                        Some(v) if r * 16 + v <= MAX_RUNE => r = r * 16 + v,
                        _ => break None,
                    }
                    n += 1;
                }
            }
            Some(x) => {
                t = &t[x.len_utf8()..];
                let y = t.chars().next();
                if let Some(y) = y {
                    t = &t[y.len_utf8()..];
                }
                match (x.to_digit(16), y.and_then(|y| y.to_digit(16))) {
                    (Some(x), Some(y)) => Some(x * 16 + y),
                    _ => None,
                }
            }
        },
        'a' => Some(7),
        'f' => Some(12),
        'n' => Some(10),
        'r' => Some(13),
        't' => Some(9),
        'v' => Some(11),
        // Escaped punctuation is itself; escaped letters and digits are
        // reserved.
        _ if c.is_ascii() && !c.is_ascii_alphanumeric() => Some(c as u32),
        _ => None,
    };
    match r {
        Some(r) => Ok((r, t)),
        None => Err(Error::Syntax(ERR_INVALID_ESCAPE, &s[..s.len() - t.len()])),
    }
}

/// Go's unicode.SimpleFold: the next code point in r's case-folding orbit.
pub fn simple_fold(r: u32) -> u32 {
    if !(MIN_FOLD..=MAX_FOLD).contains(&r) {
        return r;
    }
    let (mut lo, mut hi) = (0, FOLD.len());
    while lo < hi {
        let m = (lo + hi) / 2;
        if FOLD[m].0 & 0x1F_FFFF <= r {
            lo = m + 1;
        } else {
            hi = m;
        }
    }
    if lo == 0 {
        return r;
    }
    let (w, delta) = FOLD[lo - 1];
    let start = w & 0x1F_FFFF;
    if r > start + (w >> 21 & 0x7F) {
        r
    } else if w >> 28 & 1 == 0 {
        (r as i32 + delta) as u32
    } else if (r - start) & 1 == 0 {
        r + 1
    } else {
        r - 1
    }
}

/// Go's appendRange: adds [lo, hi] to the class r, merging it into one of
/// the last two ranges when they touch.
fn append_range(r: &mut Vec<u32>, lo: u32, hi: u32) {
    let n = r.len();
    for i in [2, 4] {
        if n >= i {
            let (rlo, rhi) = (r[n - i], r[n - i + 1]);
            if lo <= rhi + 1 && rlo <= hi + 1 {
                if lo < rlo {
                    r[n - i] = lo;
                }
                if hi > rhi {
                    r[n - i + 1] = hi;
                }
                return;
            }
        }
    }
    r.push(lo);
    r.push(hi);
}

/// Go's appendFoldedRange: [lo, hi] and every code point that folds to one
/// in it.
fn append_folded_range(r: &mut Vec<u32>, lo: u32, hi: u32) {
    if lo <= MIN_FOLD && hi >= MAX_FOLD || hi < MIN_FOLD || lo > MAX_FOLD {
        return append_range(r, lo, hi);
    }
    let (mut lo, mut hi) = (lo, hi);
    if lo < MIN_FOLD {
        append_range(r, lo, MIN_FOLD - 1);
        lo = MIN_FOLD;
    }
    if hi > MAX_FOLD {
        append_range(r, MAX_FOLD + 1, hi);
        hi = MAX_FOLD;
    }
    for c in lo..=hi {
        append_range(r, c, c);
        let mut f = simple_fold(c);
        while f != c {
            append_range(r, f, f);
            f = simple_fold(f);
        }
    }
}

fn append_class(r: &mut Vec<u32>, x: &[u32]) {
    let mut i = 0;
    while i < x.len() {
        append_range(r, x[i], x[i + 1]);
        i += 2;
    }
}

/// Adds the complement of the clean class x.
fn append_negated_class(r: &mut Vec<u32>, x: &[u32]) {
    let mut next = 0;
    let mut i = 0;
    while i < x.len() {
        if x[i] > next {
            append_range(r, next, x[i] - 1);
        }
        next = x[i + 1] + 1;
        i += 2;
    }
    if next <= MAX_RUNE {
        append_range(r, next, MAX_RUNE);
    }
}

/// Go's cleanClass: sorts the ranges and merges those that touch.
fn clean_class(r: &mut Vec<u32>) {
    let n = r.len() / 2;
    // [lo, hi] pairs laid out as u32s.
    let pairs = unsafe { core::slice::from_raw_parts_mut(r.as_mut_slice().as_mut_ptr() as *mut [u32; 2], n) };
    // By lo, then longest first. Shell sort: a few lines of code (core's
    // sort is kilobytes), and classes are short.
    for gap in [701, 301, 132, 57, 23, 10, 4, 1] {
        for i in gap..n {
            let x = pairs[i];
            let mut j = i;
            while j >= gap && (x[0] < pairs[j - gap][0] || x[0] == pairs[j - gap][0] && x[1] > pairs[j - gap][1]) {
                pairs[j] = pairs[j - gap];
                j -= gap;
            }
            pairs[j] = x;
        }
    }
    if n == 0 {
        return;
    }
    let mut w = 1;
    for i in 1..n {
        let [lo, hi] = pairs[i];
        if lo <= pairs[w - 1][1] + 1 {
            if hi > pairs[w - 1][1] {
                pairs[w - 1][1] = hi;
            }
        } else {
            pairs[w] = pairs[i];
            w += 1;
        }
    }
    r.truncate(2 * w);
}

/// Go's negateClass, in place, of a clean class.
fn negate_class(r: &mut Vec<u32>) {
    let mut next = 0;
    let mut w = 0;
    let mut i = 0;
    while i < r.len() {
        let (lo, hi) = (r[i], r[i + 1]);
        if lo > next {
            r[w] = next;
            r[w + 1] = lo - 1;
            w += 2;
        }
        next = hi + 1;
        i += 2;
    }
    r.truncate(w);
    if next <= MAX_RUNE {
        r.push(next);
        r.push(MAX_RUNE);
    }
}

/// Turns a parse tree into a program, depth first with a frame stack (no
/// recursion: trees may be 1000 deep).
struct Compiler<'p> {
    nodes: &'p [Node],
    pool: &'p [u32],
    out: Vec<Inst>,
    classes: Vec<Class>,
    ranges: Vec<u32>,
    frames: Vec<Frame>,
}

/// A node being compiled: state 0 before its first child, then 1; cur is
/// the child being compiled, p and q hold instruction indexes to patch.
#[derive(Clone, Copy)]
struct Frame {
    node: u32,
    state: u32,
    cur: u32,
    p: u32,
    q: u32,
}

impl<'p> Compiler<'p> {
    fn here(&self) -> u32 {
        self.out.len() as u32
    }

    fn emit(&mut self, i: Inst) -> Result<(), Error> {
        if self.out.len() >= MAX_INSTS {
            return Err(Error::TooLarge);
        }
        self.out.push(i);
        Ok(())
    }

    /// Appends a copy of the block [start, start+len).
    fn copy(&mut self, start: u32, len: u32) -> Result<(), Error> {
        if self.out.len() + len as usize > MAX_INSTS {
            return Err(Error::TooLarge);
        }
        self.out.extend_from_within(start as usize, (start + len) as usize);
        Ok(())
    }

    /// Points a chain of jumps or splits (linked through their open
    /// target, ending at NONE) at target.
    fn patch(&mut self, mut pc: u32, target: u32) {
        while pc != NONE {
            let rel = target as i32 - pc as i32;
            let i = &mut self.out[pc as usize];
            pc = match *i {
                Inst::Jmp(next) => {
                    *i = Inst::Jmp(rel);
                    next as u32
                }
                Inst::Split(a, next) => {
                    *i = Inst::Split(a, rel);
                    next as u32
                }
                _ => NONE,
            };
        }
    }

    fn class(&mut self, start: u32, len: u32) -> u32 {
        let mut c = Class { ascii: [0; 4], lo: self.ranges.len() as u32, hi: 0 };
        for k in (start..start + len).step_by(2) {
            let (lo, hi) = (self.pool[k as usize], self.pool[k as usize + 1]);
            for b in lo..=hi.min(0x7F) {
                c.ascii[(b >> 5) as usize] |= 1 << (b & 31);
            }
            if hi >= 0x80 {
                self.ranges.push(lo.max(0x80));
                self.ranges.push(hi);
            }
        }
        c.hi = self.ranges.len() as u32;
        self.classes.push(c);
        (self.classes.len() - 1) as u32
    }

    fn tree(&mut self, root: u32) -> Result<(), Error> {
        self.frames.push(Frame { node: root, state: 0, cur: NONE, p: 0, q: 0 });
        while let Some(&top) = self.frames.as_slice().last() {
            let mut f = top;
            let first = f.state == 0;
            f.state = 1;
            let nd = self.nodes[f.node as usize];
            let mut child = NONE;
            let (min, max) = (nd.a as i32, nd.b as i32);
            match nd.op {
                CHAR => self.emit(Inst::Char(nd.a))?,
                CLASS => {
                    let c = self.class(nd.a, nd.b);
                    self.emit(Inst::Class(c))?
                }
                ANY => self.emit(Inst::Any)?,
                ANY_NOT_NL => self.emit(Inst::AnyNotNL)?,
                ASSERT => self.emit(Inst::Assert(nd.a as u8))?,
                NO_MATCH => self.emit(Inst::Fail)?,
                CAPTURE if first => child = nd.sub,
                CONCAT => {
                    f.cur = if first { nd.sub } else { self.nodes[f.cur as usize].next };
                    child = f.cur;
                }
                ALTERNATE => {
                    // Split(next alternative), x, Jmp(end), ..., the last one.
                    let mut start = first;
                    if first {
                        f.cur = nd.sub;
                        f.p = NONE;
                    } else if self.nodes[f.cur as usize].next == NONE {
                        let end = self.here();
                        self.patch(f.p, end);
                    } else {
                        let j = self.here();
                        self.emit(Inst::Jmp(f.p as i32))?;
                        f.p = j;
                        let here = self.here();
                        self.patch(f.q, here);
                        f.cur = self.nodes[f.cur as usize].next;
                        start = true;
                    }
                    if start {
                        if self.nodes[f.cur as usize].next != NONE {
                            f.q = self.here();
                            self.emit(Inst::Split(1, NONE as i32))?;
                        }
                        child = f.cur;
                    }
                }
                STAR => self.star(&mut f, first, nd.sub, &mut child)?,
                REPEAT if min == 0 && max == -1 => self.star(&mut f, first, nd.sub, &mut child)?,
                PLUS if first => {
                    f.p = self.here();
                    child = nd.sub;
                }
                PLUS => {
                    let s = self.here();
                    self.emit(Inst::Split(f.p as i32 - s as i32, 1))?;
                }
                QUEST if first => {
                    f.p = self.here();
                    self.emit(Inst::Split(1, NONE as i32))?;
                    child = nd.sub;
                }
                QUEST => {
                    let end = self.here();
                    self.patch(f.p, end);
                }
                REPEAT if max == 0 => {}
                REPEAT if first => {
                    // x{0,m}: the first copy is optional too.
                    f.q = NONE;
                    if min == 0 {
                        f.q = self.here();
                        self.emit(Inst::Split(1, NONE as i32))?;
                    }
                    f.p = self.here();
                    child = nd.sub;
                }
                REPEAT => {
                    // x{n,m} is n copies of x, then m-n optional ones, each
                    // skipping to the end; x{n,} loops on the last copy.
                    let (start, len) = (f.p, self.here() - f.p);
                    for _ in 1..min {
                        self.copy(start, len)?;
                    }
                    let mut chain = f.q;
                    if max < 0 {
                        self.emit(Inst::Split(-(len as i32), 1))?;
                    } else {
                        for _ in min.max(1)..max {
                            let s = self.here();
                            self.emit(Inst::Split(1, chain as i32))?;
                            chain = s;
                            self.copy(start, len)?;
                        }
                    }
                    let end = self.here();
                    self.patch(chain, end);
                }
                _ => {} // EMPTY, and CAPTURE once its child is done
            }
            if child == NONE {
                self.frames.pop();
            } else {
                let k = self.frames.len() - 1;
                self.frames[k] = f;
                self.frames.push(Frame { node: child, state: 0, cur: NONE, p: 0, q: 0 });
            }
        }
        Ok(())
    }

    /// x*: Split(x, end), x, Jmp(split).
    fn star(&mut self, f: &mut Frame, first: bool, sub: u32, child: &mut u32) -> Result<(), Error> {
        if first {
            f.p = self.here();
            self.emit(Inst::Split(1, NONE as i32))?;
            *child = sub;
        } else {
            let j = self.here();
            self.emit(Inst::Jmp(f.p as i32 - j as i32))?;
            let end = self.here();
            self.patch(f.p, end);
        }
        Ok(())
    }
}

// The matcher's scratch space, shared by every pattern of the instance (a
// wasm instance runs one event at a time): marks (the generation that last
// added an instruction to a list), the two thread lists, and the stack of
// the closure walk. Sized in configure for the largest program.
struct Scratch {
    mark: *mut u32,
    lists: [*mut u32; 2],
    stack: *mut u32,
    cap: usize,
    gen: u32,
}

static mut SCRATCH: Scratch = Scratch {
    mark: core::ptr::null_mut(),
    lists: [core::ptr::null_mut(); 2],
    stack: core::ptr::null_mut(),
    cap: 0,
    gen: 0,
};

fn reserve(alloc: Alloc<'static>, n: usize) {
    let s = unsafe { &mut *core::ptr::addr_of_mut!(SCRATCH) };
    if n <= s.cap {
        return;
    }
    let words = |n: usize| alloc.bytes(n * 4).as_mut_ptr() as *mut u32;
    s.mark = words(n);
    s.lists = [words(n), words(n)];
    s.stack = words(n);
    s.cap = n;
    s.gen = 0;
}

impl Regex {
    /// Sets starts to the bytes a match can start with: the first bytes of
    /// what the instructions reachable from the start (through any
    /// assertion) consume. Not when the start reaches Match (an empty
    /// match) or consumes any byte.
    fn first_bytes(&mut self, alloc: Alloc<'static>) {
        let mut seen = Vec::new(alloc);
        let mut work = Vec::new(alloc);
        for _ in 0..self.prog.len() {
            seen.push(false);
        }
        work.push(0u32);
        let mut set = [0u32; 8];
        while let Some(pc) = work.pop() {
            if seen[pc as usize] {
                continue;
            }
            seen[pc as usize] = true;
            let mut add = |lo: u32, hi: u32| {
                for b in lo..=hi.min(0x7F) {
                    set[(b >> 5) as usize] |= 1 << (b & 31);
                }
                if hi >= 0x80 {
                    set[4..].fill(!0); // any lead byte, or invalid UTF-8 (U+FFFD)
                }
            };
            match self.prog[pc as usize] {
                Inst::Match | Inst::Any | Inst::AnyNotNL => return,
                Inst::Fail => {}
                Inst::Char(c) => add(c, c),
                Inst::Class(k) => {
                    let c = self.classes[k as usize];
                    for b in 0..0x80 {
                        if c.ascii[(b >> 5) as usize] >> (b & 31) & 1 != 0 {
                            add(b, b);
                        }
                    }
                    if c.hi > c.lo {
                        add(0x80, 0x80);
                    }
                }
                Inst::Assert(_) => work.push(pc + 1),
                Inst::Jmp(d) => work.push((pc as i32 + d) as u32),
                Inst::Split(a, b) => {
                    work.push((pc as i32 + a) as u32);
                    work.push((pc as i32 + b) as u32);
                }
            }
        }
        self.starts = set;
        self.skip = true;
    }

    /// Whether the pattern matches anywhere in s (UTF-8 as Go reads it).
    pub fn is_match(&self, s: &[u8]) -> bool {
        let sc = unsafe { &mut *core::ptr::addr_of_mut!(SCRATCH) };
        let n = self.prog.len();
        // Programs are at most sc.cap long (reserve, in compile).
        let mark = unsafe { core::slice::from_raw_parts_mut(sc.mark, n) };
        let stack = unsafe { core::slice::from_raw_parts_mut(sc.stack, n) };
        let mut cur = unsafe { core::slice::from_raw_parts_mut(sc.lists[0], n) };
        let mut next = unsafe { core::slice::from_raw_parts_mut(sc.lists[1], n) };
        let mut gen = new_gen(sc, mark);
        let mut ncur = 0;
        let mut pos = 0;
        let mut prev = -1;
        let (mut r, mut w) = rune_at(s, 0);
        loop {
            if ncur == 0 {
                if self.anchored && pos > 0 {
                    return false;
                }
                if self.first < 0x80 {
                    // Nothing is running: skip to where a match can start.
                    match find_byte(s, pos, self.first as u8) {
                        None => return false,
                        Some(p) if p != pos => {
                            pos = p;
                            (r, w) = (self.first as i32, 1);
                            gen = new_gen(sc, mark); // the start holds no assertion, so prev does not matter
                        }
                        _ => {}
                    }
                } else if self.skip {
                    // The same, character by character (so as to stay on
                    // the characters Go's decoding steps through).
                    let p0 = pos;
                    while pos < s.len() && self.starts[(s[pos] >> 5) as usize] >> (s[pos] & 31) & 1 == 0 {
                        prev = if s[pos] < 0x80 { s[pos] as i32 } else { 0xFFFD }; // all non-ASCII: the same context
                        pos += if s[pos] < 0x80 { 1 } else { rune_at(s, pos).1 };
                    }
                    if pos == s.len() {
                        return false;
                    }
                    if pos != p0 {
                        (r, w) = rune_at(s, pos);
                        gen = new_gen(sc, mark);
                    }
                }
            }
            if (pos == 0 || !self.anchored) && self.add(mark, gen, cur, &mut ncur, stack, 0, context(prev, r)) {
                return true;
            }
            if r < 0 {
                return false;
            }
            let np = pos + w;
            let (r1, w1) = rune_at(s, np);
            let ctx = context(r, r1);
            gen = new_gen(sc, mark);
            let mut nnext = 0;
            for i in 0..ncur {
                let pc = cur[i];
                let ok = match self.prog[pc as usize] {
                    Inst::Char(c) => r as u32 == c,
                    Inst::Class(k) => self.class_has(k, r as u32),
                    Inst::AnyNotNL => r != '\n' as i32,
                    Inst::Any => true,
                    _ => false,
                };
                if ok && self.add(mark, gen, next, &mut nnext, stack, pc + 1, ctx) {
                    return true;
                }
            }
            core::mem::swap(&mut cur, &mut next);
            ncur = nnext;
            pos = np;
            prev = r;
            r = r1;
            w = w1;
        }
    }

    /// Adds pc and what it reaches without consuming a character (given the
    /// assertions that hold here) to list; true if that reaches Match.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &self,
        mark: &mut [u32],
        gen: u32,
        list: &mut [u32],
        n: &mut usize,
        stack: &mut [u32],
        pc: u32,
        ctx: u8,
    ) -> bool {
        if mark[pc as usize] == gen {
            return false;
        }
        mark[pc as usize] = gen;
        stack[0] = pc;
        let mut sp = 1;
        while sp > 0 {
            sp -= 1;
            let pc = stack[sp];
            let (a, b) = match self.prog[pc as usize] {
                Inst::Match => return true,
                Inst::Jmp(d) => (d, 0),
                Inst::Split(x, y) => (x, y),
                Inst::Assert(f) if ctx & f == f => (1, 0),
                Inst::Assert(_) | Inst::Fail => continue,
                _ => {
                    list[*n] = pc;
                    *n += 1;
                    continue;
                }
            };
            for d in [b, a] {
                if d != 0 {
                    let t = (pc as i32 + d) as usize;
                    if mark[t] != gen {
                        mark[t] = gen;
                        stack[sp] = t as u32;
                        sp += 1;
                    }
                }
            }
        }
        false
    }

    fn class_has(&self, k: u32, r: u32) -> bool {
        let c = &self.classes[k as usize];
        if r < 0x80 {
            return c.ascii[(r >> 5) as usize] >> (r & 31) & 1 != 0;
        }
        let ranges = &self.ranges[c.lo as usize..c.hi as usize];
        let (mut lo, mut hi) = (0, ranges.len() / 2);
        while lo < hi {
            let m = (lo + hi) / 2;
            if r < ranges[2 * m] {
                hi = m;
            } else if r > ranges[2 * m + 1] {
                lo = m + 1;
            } else {
                return true;
            }
        }
        false
    }
}

fn new_gen(sc: &mut Scratch, mark: &mut [u32]) -> u32 {
    sc.gen = sc.gen.wrapping_add(1);
    if sc.gen == 0 {
        mark.fill(0);
        sc.gen = 1;
    }
    sc.gen
}

/// Go's syntax.EmptyOpContext: the assertions that hold between r1 and r2
/// (-1: the start or end of the text).
fn context(r1: i32, r2: i32) -> u8 {
    let mut op = NO_WORD_BOUNDARY;
    let mut boundary = false;
    if is_word(r1) {
        boundary = true;
    } else if r1 == '\n' as i32 {
        op |= BEGIN_LINE;
    } else if r1 < 0 {
        op |= BEGIN_TEXT | BEGIN_LINE;
    }
    if is_word(r2) {
        boundary = !boundary;
    } else if r2 == '\n' as i32 {
        op |= END_LINE;
    } else if r2 < 0 {
        op |= END_TEXT | END_LINE;
    }
    if boundary {
        op ^= WORD_BOUNDARY | NO_WORD_BOUNDARY;
    }
    op
}

/// \b's word characters: ASCII only, as in Go.
fn is_word(r: i32) -> bool {
    r >= 0 && r < 0x80 && ((r as u8).is_ascii_alphanumeric() || r == '_' as i32)
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

/// The index of the first c in s at or after i, eight bytes a step (every
/// loop iteration pays for the host's deadline check).
fn find_byte(s: &[u8], mut i: usize, c: u8) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let pat = LO * c as u64;
    while i + 8 <= s.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[i..i + 8]);
        let x = u64::from_le_bytes(w) ^ pat;
        let m = x.wrapping_sub(LO) & !x & HI;
        if m != 0 {
            return Some(i + (m.trailing_zeros() >> 3) as usize);
        }
        i += 8;
    }
    while i < s.len() {
        if s[i] == c {
            return Some(i);
        }
        i += 1;
    }
    None
}
