//! argguard: toolwarden's first-party plugin that checks tool-call
//! arguments against rules from its config, as shipped
//! (plugins/argguard.wasm). The rules, their config and every message are
//! those of the Go package beside it (../argguard.go, ../glob.go), which is
//! the reference: a differential test (internal/plugin/argguard_module_test.go)
//! holds the two to the same output, byte for byte, on envelopes the host
//! builds, and fuzz tests do the same for globs and paths. Why the shipped
//! module is Rust and not Go: docs/RATIONALE.md, "First-party plugins are
//! small modules".
//!
//! Each rule has tool and app globs over the call, an argument (a name, or
//! a JSON pointer when it starts with '/'), one matcher (deny_, ask_ or
//! allow_ with _glob or _regex) and optional code and reason. The verdict is
//! the strongest match (deny > ask > allow), from the first rule with that
//! decision, and names the rule's argument; asks are never rememberable as
//! a whole, and an ask_glob ask proposes a scope instead (scope.rs).
//! Globs judge the paths the server may resolve a value to (resolve.rs).
//!
//! Regexps (and the globs, translated to regexps) are compiled once per
//! instance, at configure, by the host's own Go regexp through the Rust
//! kit's regex module (pdk/rust/src/regex.rs, the imports of pdk/ABI.md
//! section 16), so they are read and matched exactly as the reference
//! reads them, within the host's bounds (4096 bytes, 65536 instructions).
//! Values are handled as Go's pdk hands them over: strings as bytes
//! (invalid UTF-8 kept), anything else as its JSON text.
#![no_std]

mod glob;
mod resolve;
mod scope;

use toolwarden_pdk::regex::{self, Regex};
use resolve::Context;
use toolwarden_pdk::{export, Alloc, Decision, Error, Event, Kind, Plugin, Value, Verdict};
use toolwarden_pdk::ArenaVec as Vec;

const CODE_DENY: &str = "arg_denied";
const CODE_ASK: &str = "arg_needs_approval";
const CODE_ALLOW: &str = "arg_allowed";

const MATCHERS: [(&str, Decision); 6] = [
    ("deny_glob", Decision::Deny),
    ("ask_glob", Decision::Ask),
    ("allow_glob", Decision::Allow),
    ("deny_regex", Decision::Deny),
    ("ask_regex", Decision::Ask),
    ("allow_regex", Decision::Allow),
];

#[derive(Clone, Copy)]
struct Rule {
    tool: &'static str,
    app: &'static str,
    arg: &'static str,
    pointer: bool,
    decision: Decision,
    /// The matcher key, e.g. "deny_glob".
    kind: &'static str,
    pattern: &'static str,
    glob: bool,
    /// The glob is "~" or starts with "~/": paths under the server's home.
    home: bool,
    /// The regexp, or the glob's translation.
    re: Regex,
    code: &'static str,
    reason: &'static str,
    /// What an ask_glob rule proposes to remember an approval for
    /// (scope.rs): "dir", "exact" or "none".
    remember: &'static str,
    /// Whether the verdict names arg in its "arguments" (see flaggable).
    flag: bool,
    /// The default reason around the value: `argument "path" = ` and
    /// ` matches deny_glob "/etc/**"`.
    before: &'static [u8],
    after: &'static [u8],
}

struct Config {
    rules: &'static [Rule],
}

fn configure(cfg: Value<'static>, alloc: Alloc<'static>) -> Result<Config, Error<'static>> {
    let mut rules = Vec::new(alloc);
    for (key, v) in cfg.members() {
        if key != "rules" {
            return Err(Error::bad_config(alloc.concat(&[key, ": unknown key (argguard knows only \"rules\")"])));
        }
        if v.kind() != Kind::Array {
            return Err(Error::bad_config("rules: want an array of tables"));
        }
        for (i, rv) in v.elements().enumerate() {
            rules.push(rule(i, rv, alloc)?);
        }
    }
    Ok(Config { rules: rules.into_static() })
}

fn rule(i: usize, v: Value<'static>, alloc: Alloc<'static>) -> Result<Rule, Error<'static>> {
    let mut at = alloc.string();
    at.push_str("rules[");
    at.push_uint(i);
    at.push(']');
    let at = at.as_str();
    let fail = |parts: &[&str]| Error::bad_config(alloc.concat(parts));
    if v.kind() != Kind::Object {
        return Err(fail(&[
            at,
            ": want a table like {tool = \"write_file\", arg = \"path\", deny_glob = \"/etc/**\"}",
        ]));
    }
    let mut r = Rule {
        tool: "*",
        app: "*",
        arg: "",
        pointer: false,
        decision: Decision::Abstain,
        kind: "",
        pattern: "",
        glob: false,
        home: false,
        re: Regex::EMPTY,
        code: "",
        reason: "",
        remember: "",
        before: b"",
        after: b"",
        flag: false,
    };
    for (key, v) in v.members() {
        let slot = match key {
            "tool" => &mut r.tool,
            "app" => &mut r.app,
            "arg" => &mut r.arg,
            "code" => &mut r.code,
            "reason" => &mut r.reason,
            "remember" => &mut r.remember,
            _ => {
                let (k, d) = match MATCHERS.iter().find(|m| m.0 == key) {
                    Some(&m) => m,
                    None => return Err(fail(&[at, ".", key, ": unknown key (want tool, app, arg, code, reason, remember, or one of deny_glob, ask_glob, allow_glob, deny_regex, ask_regex, allow_regex)"])),
                };
                if !r.kind.is_empty() {
                    return Err(fail(&[at, ": has both ", r.kind, " and ", k, "; give each rule one matcher"]));
                }
                r.kind = k;
                r.decision = d;
                &mut r.pattern
            }
        };
        match v.str() {
            Some(s) => *slot = s,
            None => return Err(fail(&[at, ".", key, ": want a string"])),
        }
    }
    if r.arg.is_empty() {
        return Err(fail(&[at, ": missing \"arg\" (an argument name, or a JSON pointer such as \"/options/path\")"]));
    }
    r.pointer = r.arg.starts_with('/');
    r.flag = flaggable(r.arg.as_bytes());
    if r.kind.is_empty() {
        return Err(fail(&[
            at,
            ": missing a matcher (deny_glob, ask_glob, allow_glob, deny_regex, ask_regex or allow_regex)",
        ]));
    }
    r.glob = r.kind.ends_with("glob");
    r.home = r.glob && (r.pattern == "~" || r.pattern.starts_with("~/"));
    let compiled = if r.glob { glob::compile(r.pattern, alloc) } else { regex::compile(r.pattern, alloc) };
    r.re = compiled.map_err(|e| fail(&[at, ".", r.kind, ": ", e.text()]))?;
    if !r.code.is_empty() && !valid_code(r.code.as_bytes()) {
        return Err(fail(&[at, ".code: want [a-z0-9_.:-]{1,64}"]));
    }
    scope::check_remember(&mut r).map_err(|msg| fail(&[at, ".remember: ", msg]))?;
    let mut w = Writer::new(alloc, 16 + 6 * r.arg.len());
    w.put(b"argument ");
    w.quote(r.arg.as_bytes(), b"");
    w.put(b" = ");
    r.before = w.done();
    let mut w = Writer::new(alloc, 16 + r.kind.len() + 6 * r.pattern.len());
    w.put(b" matches ");
    w.put(r.kind.as_bytes());
    w.put(b" ");
    w.quote(r.pattern.as_bytes(), b"");
    r.after = w.done();
    Ok(r)
}

/// Whether the host takes arg as the name of a flagged argument (ABI 5.2):
/// at most 256 bytes and, for a JSON pointer, every '~' followed by '0' or
/// '1'.
fn flaggable(arg: &[u8]) -> bool {
    arg.len() <= 256
        && (arg.first() != Some(&b'/')
            || arg.iter().enumerate().all(|(i, &c)| c != b'~' || matches!(arg.get(i + 1), Some(b'0') | Some(b'1'))))
}

fn valid_code(s: &[u8]) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.iter().all(|&c| matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b':' | b'-'))
}

fn check<'a>(cfg: &'static Config, ev: &Event<'a>) -> Result<Verdict<'a>, Error<'a>> {
    if cfg.rules.is_empty() {
        return Ok(Verdict::abstain());
    }
    // One pass over the call (get would rescan it from the start for each
    // key); the first member of each name counts, as with get.
    let (mut tool, mut app, mut args) = (Value::default(), Value::default(), Value::default());
    for (key, v) in ev.call().members_bytes() {
        let slot = match key {
            b"tool" => &mut tool,
            b"app" => &mut app,
            b"arguments" => &mut args,
            _ => continue,
        };
        if !slot.exists() {
            *slot = v;
        }
        if tool.exists() && app.exists() && args.exists() {
            break;
        }
    }
    let tool = tool.get("name").str_bytes().unwrap_or(b"");
    let app = app.str_bytes().unwrap_or(b"");
    let alloc = ev.alloc();
    let mut ctx: Option<Context<'a>> = None; // read when a path first needs it
    let mut best: Option<(&'static Rule, Hit<'a>)> = None;
    let mut best_i = 0;
    for (i, r) in cfg.rules.iter().enumerate() {
        if matches!(best, Some((b, _)) if r.decision as u8 <= b.decision as u8) {
            continue; // cannot beat what already matched
        }
        if !glob::name_match(r.tool.as_bytes(), tool) || !glob::name_match(r.app.as_bytes(), app) {
            continue;
        }
        let v = if r.pointer { args.pointer(r.arg) } else { args.get_bytes(r.arg.as_bytes()) };
        if !v.exists() {
            continue;
        }
        let (h, ok) = matches(r, v, &mut ctx, ev, alloc);
        if ok {
            best = Some((r, h));
            best_i = i;
        }
    }
    let (r, h) = match best {
        Some(b) => b,
        None => return Ok(Verdict::abstain()),
    };
    let code = match (r.code, r.decision) {
        ("", Decision::Allow) => CODE_ALLOW,
        ("", Decision::Ask) => CODE_ASK,
        ("", _) => CODE_DENY,
        (code, _) => code,
    };
    let reason = if !r.reason.is_empty() { r.reason } else { default_reason(r, &h, alloc) };
    let scopes = match scope::propose(cfg.rules, best_i, &h, tool, app, args, &mut ctx, ev, alloc) {
        Some(sc) => scope::one(sc, alloc),
        None => &[],
    };
    Ok(Verdict {
        decision: r.decision,
        code,
        reason,
        remember: false,
        labels: &[],
        arguments: if r.flag { core::slice::from_ref(&r.arg) } else { &[] },
        scopes,
    })
}

/// The value that matched a rule and how: through a path it resolves to
/// (when that differs from the value), or failing closed on a path that
/// cannot be resolved (why).
#[derive(Clone, Copy)]
struct Hit<'a> {
    val: &'a [u8],
    resolved: &'a [u8],
    why: &'static str,
}

/// Whether the value matches, and which value did: for an array, the first
/// element that matches (deny, ask) or the last of all matching (allow).
fn matches<'a>(r: &Rule, v: Value<'a>, ctx: &mut Option<Context<'a>>, ev: &Event<'a>, alloc: Alloc<'a>) -> (Hit<'a>, bool) {
    if v.kind() != Kind::Array {
        return match_one(r, v, ctx, ev, alloc);
    }
    let all = r.decision == Decision::Allow;
    let mut last = Hit { val: b"", resolved: b"", why: "" };
    let mut n = 0;
    for e in v.elements() {
        n += 1;
        let (h, m) = match_one(r, e, ctx, ev, alloc);
        last = h;
        if m != all {
            return (h, !all);
        }
    }
    (last, all && n > 0)
}

/// A regexp matches anywhere in the value's text; a glob matches the text,
/// its cleaned form or, for a string, the paths the server may resolve it
/// to: any of them for deny and ask (and an unresolvable path), every one
/// for allow.
fn match_one<'a>(r: &Rule, v: Value<'a>, ctx: &mut Option<Context<'a>>, ev: &Event<'a>, alloc: Alloc<'a>) -> (Hit<'a>, bool) {
    let (s, is_str) = match v.str_bytes() {
        Some(s) => (s, true),
        None => (v.raw().unwrap_or(b""), false),
    };
    let mut h = Hit { val: s, resolved: b"", why: "" };
    if !r.glob {
        return (h, r.re.is_match(s));
    }
    let abs = is_str && s.first() == Some(&b'/');
    // The server's home, for a glob on "~/...".
    let home: &'a [u8] = if r.home { context(ctx, ev, alloc).home() } else { b"" };
    if r.decision != Decision::Allow {
        let (m, mut unknown) = path_match(r, s, home, alloc);
        if m {
            return (h, true);
        }
        if !s.is_empty() {
            let c = glob::clean(s, alloc);
            if c != s {
                let (m, u) = path_match(r, c, home, alloc);
                if m {
                    h.resolved = c;
                    return (h, true);
                }
                unknown = unknown || u;
            }
        }
        if is_str && !abs {
            h.why = context(ctx, ev, alloc).resolve(s, alloc, |f| {
                let (m, u) = path_match(r, f, home, alloc);
                if m {
                    h.resolved = f;
                }
                unknown = unknown || u;
                !m
            });
            if !h.resolved.is_empty() || !h.why.is_empty() {
                return (h, true);
            }
        }
        if unknown {
            h.why = resolve::WHY_HOME;
        }
        return (h, unknown);
    }
    // An allow needs every form the server may use to match.
    if !is_str || abs {
        let (m, u) = path_match(r, s, home, alloc);
        if !m || u {
            return (h, false);
        }
        if !s.is_empty() {
            let c = glob::clean(s, alloc);
            if c != s {
                h.resolved = c;
                let (m, u) = path_match(r, c, home, alloc);
                return (h, m && !u);
            }
        }
        return (h, true);
    }
    let mut ok = true;
    let why = context(ctx, ev, alloc).resolve(s, alloc, |f| {
        if h.resolved.is_empty() {
            h.resolved = f;
        }
        let (m, u) = path_match(r, f, home, alloc);
        ok = m && !u;
        ok
    });
    (h, why.is_empty() && ok)
}

/// The check's server_context, read when a path first needs it.
fn context<'a, 'b>(ctx: &'b mut Option<Context<'a>>, ev: &Event<'a>, alloc: Alloc<'a>) -> &'b Context<'a> {
    ctx.get_or_insert_with(|| Context::read(ev.input().get_bytes(b"server_context"), alloc))
}

/// Matches one form of a path: (match, unknown). A glob that starts with
/// "~" names paths under the server's home: an absolute form under it is
/// matched as "~/...", and one that cannot be related to an unknown home
/// is unknown.
fn path_match<'a>(r: &Rule, f: &'a [u8], home: &[u8], alloc: Alloc<'a>) -> (bool, bool) {
    if !r.home || f.first() != Some(&b'/') {
        return (r.re.is_match(f), false);
    }
    if home.is_empty() {
        return (false, true);
    }
    let t: &[u8] = if f == home {
        b"~"
    } else if home == b"/" {
        resolve::join(b"~", b"", f, alloc)
    } else if f.starts_with(home) && f[home.len()] == b'/' {
        resolve::join(b"~", b"", &f[home.len()..], alloc)
    } else {
        f
    };
    (r.re.is_match(t), false)
}

/// `argument "path" = "x" (resolved: "/srv/x") matches deny_glob "/etc/**"`,
/// or `(unresolved: why)`, each value clipped to 120 bytes.
fn default_reason<'a>(r: &Rule, h: &Hit<'_>, alloc: Alloc<'a>) -> &'a str {
    let (val, more): (&[u8], &[u8]) = if h.val.len() <= 120 { (h.val, b"") } else { (&h.val[..120], b"...") };
    let (res, rmore): (&[u8], &[u8]) =
        if h.resolved.len() <= 120 { (h.resolved, b"") } else { (&h.resolved[..120], b"...") };
    let mut w = Writer::new(alloc, r.before.len() + 6 * val.len() + 6 * res.len() + 40 + h.why.len() + r.after.len());
    w.put(r.before);
    w.quote(val, more);
    if !h.why.is_empty() {
        w.put(b" (unresolved: ");
        w.put(h.why.as_bytes());
        w.put(b")");
    } else if !h.resolved.is_empty() {
        w.put(b" (resolved: ");
        w.quote(res, rmore);
        w.put(b")");
    }
    w.put(r.after);
    // Whole, valid UTF-8 characters and ASCII only (quote).
    unsafe { core::str::from_utf8_unchecked(w.done()) }
}

/// Writes into a buffer big enough for everything written: a quoted byte
/// takes at most 6 (\u001f, \ufffd).
struct Writer<'a> {
    b: &'a mut [u8],
    n: usize,
}

impl<'a> Writer<'a> {
    fn new(alloc: Alloc<'a>, cap: usize) -> Self {
        Writer { b: alloc.bytes(cap), n: 0 }
    }

    fn done(self) -> &'a [u8] {
        &self.b[..self.n]
    }

    fn put(&mut self, s: &[u8]) {
        self.b[self.n..self.n + s.len()].copy_from_slice(s);
        self.n += s.len();
    }

    /// Writes s and then suffix (plain ASCII) as one JSON string, as Go's
    /// pdk.Quote does: each byte of invalid UTF-8 becomes \ufffd.
    fn quote(&mut self, s: &[u8], suffix: &[u8]) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.put(b"\"");
        let (mut start, mut i) = (0, 0);
        while i < s.len() {
            if s.len() - i >= 8 && plain8(&s[i..i + 8]) {
                i += 8;
                continue;
            }
            let c = s[i];
            let u = [b'\\', b'u', b'0', b'0', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]];
            let esc: &[u8] = match c {
                0x20..=0x7f if c != b'"' && c != b'\\' => {
                    i += 1;
                    continue;
                }
                0x80.. => match regex::rune_at(s, i) {
                    (0xFFFD, 1) => b"\\ufffd",
                    (_, n) => {
                        i += n;
                        continue;
                    }
                },
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\t' => b"\\t",
                b'\r' => b"\\r",
                _ => &u,
            };
            self.put(&s[start..i]);
            self.put(esc);
            i += 1;
            start = i;
        }
        self.put(&s[start..]);
        self.put(suffix);
        self.put(b"\"");
    }
}

/// Whether 8 bytes are ASCII that JSON needs no escape for: no quote,
/// backslash, control or non-ASCII byte (one step of the loop instead of 8;
/// each step pays for the host's deadline check).
fn plain8(b: &[u8]) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut w = [0u8; 8];
    w.copy_from_slice(b);
    let x = u64::from_le_bytes(w);
    let q = x ^ (LO * b'"' as u64);
    let bs = x ^ (LO * b'\\' as u64);
    (q.wrapping_sub(LO) & !q | bs.wrapping_sub(LO) & !bs | x.wrapping_sub(LO * 0x20) & !x | x) & HI == 0
}


// What check reads (pdk/ABI.md section 14): the host sends nothing else;
// the rules are compiled once per instance, at init.
static PLUGIN: Plugin<Config> =
    Plugin::new("argguard", "1.0.0", configure).check(check).needs(&["tool", "app", "arguments", "server_context"]).deterministic();
export!(PLUGIN);
