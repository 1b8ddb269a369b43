//! secrets: toolwarden's first-party plugin that keeps secrets in, as
//! shipped (plugins/secrets.wasm). The rule, its config and every message
//! are those of the Go package beside it (../secrets.go, ../scan.go,
//! ../named.go), which is the reference: a differential test
//! (internal/plugin/secrets_module_test.go) holds the two to the same output,
//! byte for byte, and a fuzz test does the same on any text. Why the
//! shipped module is Rust and not Go: docs/RATIONALE.md, "First-party
//! plugins are small modules".
//!
//! - observe: a result whose text holds secret-shaped text (scan.rs) adds
//!   the labels secret_seen and secret_seen:<kind>;
//! - check: arguments that carry a secret add the same labels; a call to a
//!   tool that can exfiltrate gets ask (not rememberable) or, with mode =
//!   "deny", deny when its arguments carry a secret or the session is
//!   marked. Reasons name the kind of secret, never the secret.
#![no_std]

mod scan;

use scan::{is_url64, is_value, run, BUILTIN_KINDS, MAX_VALUE};
use toolwarden_pdk::{export, Alloc, Decision, Error, Event, Kind, Names, Plugin, StrBuf, Value, Verdict};

const LABEL_SEEN: &str = "secret_seen";
const CODE_ARGUMENTS: &str = "secret_in_arguments";
const CODE_SESSION: &str = "secret_in_session";

const KIND_NAMES: [&str; BUILTIN_KINDS as usize] = [
    "aws_access_key", "aws_secret_key", "gcp_service_account", "azure_storage_key", "github_token",
    "slack_token", "slack_webhook", "private_key", "jwt", "stripe_key", "openai_key", "anthropic_key",
    "named_secret",
];

const KIND_TEXT: [&str; BUILTIN_KINDS as usize] = [
    "an AWS access key id", "an AWS secret access key", "a GCP service-account private key",
    "an Azure storage or service key", "a GitHub token", "a Slack token", "a Slack webhook URL",
    "a private key", "a JSON Web Token", "a Stripe live key", "an OpenAI API key", "an Anthropic API key",
    "a high-entropy value named like a secret",
];

/// Always allowed (../secrets.go, publicExamples).
const PUBLIC_EXAMPLES: [&[u8]; 3] = [
    b"AKIAIOSFODNN7EXAMPLE",
    b"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    b"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
];
const MAX_ALLOW: usize = 256;
const MAX_ALLOW_LEN: usize = 512;
const MAX_PREFIXES: usize = 16;
const MAX_PREFIX_LEN: usize = 32;
const DEFAULT_MINIMUM: usize = 20;
const TABLE_LIKE: &str = "want a table like {prefix = \"acme_\", kind = \"acme_token\"}";

#[derive(Clone, Copy)]
pub struct Prefix {
    text: &'static [u8],
    kind: &'static str,
    min: usize,
}

pub struct Config {
    mode: Decision,
    disabled: u32,
    allow: [&'static [u8]; PUBLIC_EXAMPLES.len() + MAX_ALLOW],
    n_allow: usize,
    prefixes: [Prefix; MAX_PREFIXES],
    n_prefixes: usize,
    /// First bytes of prefixes.
    firsts: [bool; 256],
    /// Bytes the scanner stops at: scan::STARTS and firsts.
    starts: [bool; 256],
}

fn configure(cfg: Value<'static>, alloc: Alloc<'static>) -> Result<Config, Error<'static>> {
    let empty = Prefix { text: b"", kind: "", min: 0 };
    let mut c = Config {
        mode: Decision::Ask,
        disabled: 0,
        allow: [b""; PUBLIC_EXAMPLES.len() + MAX_ALLOW],
        n_allow: 0,
        prefixes: [empty; MAX_PREFIXES],
        n_prefixes: 0,
        firsts: [false; 256],
        starts: scan::STARTS,
    };
    for a in PUBLIC_EXAMPLES {
        c.allow[c.n_allow] = a;
        c.n_allow += 1;
    }
    let fail = |parts: &[&str]| Error::bad_config(alloc.concat(parts));
    for (key, v) in cfg.members() {
        match key {
            "mode" => {
                if v.str_eq("ask") {
                } else if v.str_eq("deny") {
                    c.mode = Decision::Deny;
                } else {
                    return Err(fail(&["mode: want \"ask\" or \"deny\", got ", raw(v)]));
                }
            }
            "allow" => {
                let items = strings(v, "allow", alloc)?;
                for (at, s) in items {
                    let s = s?;
                    if s.is_empty() || s.len() > MAX_ALLOW_LEN {
                        return Err(fail(&[at, ": want a token of 1 to 512 bytes"]));
                    }
                    if c.n_allow == c.allow.len() {
                        return Err(fail(&[at, ": too many tokens (at most 256)"]));
                    }
                    c.allow[c.n_allow] = s.as_bytes();
                    c.n_allow += 1;
                }
            }
            "disable" => {
                for (at, s) in strings(v, "disable", alloc)? {
                    let s = s?;
                    match KIND_NAMES.iter().position(|n| *n == s) {
                        Some(k) => c.disabled |= 1 << k,
                        None => {
                            let mut q = alloc.string();
                            q.push_quoted(s.as_bytes());
                            return Err(fail(&[at, ": unknown kind ", q.as_str(), " (kinds: aws_access_key, aws_secret_key, \
                                gcp_service_account, azure_storage_key, github_token, slack_token, slack_webhook, private_key, jwt, \
                                stripe_key, openai_key, anthropic_key, named_secret)"]));
                        }
                    }
                }
            }
            "prefixes" => prefixes(&mut c, v, alloc)?,
            _ => return Err(fail(&[key, ": unknown key (secrets knows \"mode\", \"allow\", \"disable\" and \"prefixes\")"])),
        }
    }
    Ok(c)
}

fn raw(v: Value<'static>) -> &'static str {
    v.raw().and_then(|r| core::str::from_utf8(r).ok()).unwrap_or("")
}

fn index(alloc: Alloc<'static>, name: &str, i: usize) -> &'static str {
    let mut at = alloc.string();
    at.push_str(name);
    at.push('[');
    at.push_uint(i);
    at.push(']');
    at.as_str()
}

/// The elements of an array of strings, each with its config path ("allow[2]")
/// and its text or the error for a non-string.
fn strings(
    v: Value<'static>,
    name: &'static str,
    alloc: Alloc<'static>,
) -> Result<impl Iterator<Item = (&'static str, Result<&'static str, Error<'static>>)>, Error<'static>> {
    if v.kind() != Kind::Array {
        return Err(Error::bad_config(alloc.concat(&[name, ": want an array of strings"])));
    }
    Ok(v.elements().enumerate().map(move |(i, e)| {
        let at = index(alloc, name, i);
        (at, e.str().ok_or_else(|| Error::bad_config(alloc.concat(&[at, ": want a string"]))))
    }))
}

fn prefixes(c: &mut Config, v: Value<'static>, alloc: Alloc<'static>) -> Result<(), Error<'static>> {
    let fail = |parts: &[&str]| Error::bad_config(alloc.concat(parts));
    if v.kind() != Kind::Array {
        return Err(fail(&["prefixes: want an array of tables like {prefix = \"acme_\", kind = \"acme_token\"}"]));
    }
    for (i, e) in v.elements().enumerate() {
        let at = index(alloc, "prefixes", i);
        if i == MAX_PREFIXES {
            return Err(fail(&[at, ": too many prefixes (at most 16)"]));
        }
        if e.kind() != Kind::Object {
            return Err(fail(&[at, ": ", TABLE_LIKE]));
        }
        let mut p = Prefix { text: b"", kind: "", min: DEFAULT_MINIMUM };
        for (key, f) in e.members() {
            match key {
                "prefix" | "kind" => match f.str() {
                    None => return Err(fail(&[at, ".", key, ": want a string"])),
                    Some(s) if key == "prefix" => p.text = s.as_bytes(),
                    Some(s) => p.kind = s,
                },
                "min_length" => match f.f64() {
                    Some(n) if n >= 1.0 && n <= 1024.0 && n == (n as usize) as f64 => p.min = n as usize,
                    _ => return Err(fail(&[at, ".min_length: want a whole number from 1 to 1024, got ", raw(f)])),
                },
                _ => return Err(fail(&[at, ".", key, ": unknown key (want \"prefix\", \"kind\" and optionally \"min_length\")"])),
            }
        }
        add_prefix(c, at, p, alloc)?;
    }
    Ok(())
}

fn add_prefix(c: &mut Config, at: &'static str, p: Prefix, alloc: Alloc<'static>) -> Result<(), Error<'static>> {
    let fail = |parts: &[&str]| Error::bad_config(alloc.concat(parts));
    if p.text.len() < 3 || p.text.len() > MAX_PREFIX_LEN || run(p.text, 0, is_url64) != p.text.len() {
        return Err(fail(&[at, ".prefix: want 3 to 32 of A-Z, a-z, 0-9, '_' and '-'"]));
    }
    if p.kind.is_empty() || p.kind.len() > 32 || !p.kind.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
        return Err(fail(&[at, ".kind: want 1 to 32 of a-z, 0-9 and '_' (it names the label secret_seen:<kind>)"]));
    }
    let mut q = alloc.string();
    q.push_quoted(p.kind.as_bytes());
    if KIND_NAMES.contains(&p.kind) {
        return Err(fail(&[at, ".kind: ", q.as_str(), " is a built-in kind"]));
    }
    if c.prefixes[..c.n_prefixes].iter().any(|x| x.kind == p.kind) {
        return Err(fail(&[at, ".kind: ", q.as_str(), " is given twice"]));
    }
    c.prefixes[c.n_prefixes] = p;
    c.n_prefixes += 1;
    c.firsts[p.text[0] as usize] = true;
    c.starts[p.text[0] as usize] = true;
    Ok(())
}

impl Config {
    fn kinds(&self) -> u32 {
        BUILTIN_KINDS + self.n_prefixes as u32
    }

    fn kind_name(&self, k: u32) -> &'static str {
        if k < BUILTIN_KINDS {
            KIND_NAMES[k as usize]
        } else {
            self.prefixes[(k - BUILTIN_KINDS) as usize].kind
        }
    }

    /// secret_seen and one secret_seen:<kind> per kind of m.
    fn labels<'a>(&self, m: u32, alloc: Alloc<'a>, out: &mut [&'a str; 32]) -> usize {
        if m == 0 {
            return 0;
        }
        out[0] = LABEL_SEEN;
        let mut n = 1;
        for k in 0..self.kinds() {
            if m & (1 << k) != 0 {
                out[n] = alloc.concat(&[LABEL_SEEN, ":", self.kind_name(k)]);
                n += 1;
            }
        }
        n
    }

    /// The kinds of m for a reason: "a GitHub token, a private key and a
    /// JSON Web Token".
    fn describe(&self, m: u32, out: &mut StrBuf<'_>) {
        let total = (0..self.kinds()).filter(|k| m & (1 << k) != 0).count();
        if total == 0 {
            out.push_str("a secret");
            return;
        }
        let mut i = 0;
        for k in 0..self.kinds() {
            if m & (1 << k) == 0 {
                continue;
            }
            if i > 0 {
                out.push_str(if i == total - 1 { " and " } else { ", " });
            }
            i += 1;
            if k < BUILTIN_KINDS {
                out.push_str(KIND_TEXT[k as usize]);
            } else {
                out.push_str("a ");
                out.push_str(self.kind_name(k));
                out.push_str(" (a configured prefix)");
            }
        }
    }

    /// Scans a value; an object's string members are also judged as
    /// assignments (name and value).
    fn member(&self, name: &[u8], v: Value<'_>) -> u32 {
        match v.kind() {
            Kind::String => {
                let s = v.str_bytes().unwrap_or(b"");
                let e = run(s, 0, is_value).min(MAX_VALUE + 1);
                self.scan(s) | self.named(name, &s[..e])
            }
            Kind::Object => {
                let mut m = 0;
                for (k, e) in v.members_bytes() {
                    m |= self.scan(k) | self.member(k, e);
                }
                m
            }
            Kind::Array => {
                let mut m = 0;
                for e in v.elements() {
                    m |= self.member(name, e);
                }
                m
            }
            _ => 0,
        }
    }

    /// Whether the session is marked, and the kinds its labels name that
    /// this config knows.
    fn session_kinds(&self, ev: &Event<'_>) -> (u32, bool) {
        let (mut m, mut marked) = (0, false);
        for v in ev.session().get("labels").elements() {
            let l = v.str_bytes().unwrap_or(b"");
            if l == LABEL_SEEN.as_bytes() {
                marked = true;
            } else if l.len() > LABEL_SEEN.len() + 1 && l.starts_with(LABEL_SEEN.as_bytes()) && l[LABEL_SEEN.len()] == b':' {
                marked = true;
                for k in 0..self.kinds() {
                    if &l[LABEL_SEEN.len() + 1..] == self.kind_name(k).as_bytes() {
                        m |= 1 << k;
                    }
                }
            }
        }
        (m, marked)
    }
}

fn observe<'a>(c: &'static Config, ev: &Event<'a>, labels: &Names<'a>) -> Result<(), Error<'a>> {
    let mut text: &[u8] = b"";
    for (k, v) in ev.get("result").members_bytes() {
        if k == b"text" {
            text = v.str_bytes().unwrap_or(b"");
        }
    }
    let mut out = [""; 32];
    let n = c.labels(c.scan(text), ev.alloc(), &mut out);
    for l in &out[..n] {
        labels.push(l);
    }
    Ok(())
}

fn check<'a>(c: &'static Config, ev: &Event<'a>) -> Result<Verdict<'a>, Error<'a>> {
    let alloc = ev.alloc();
    let call = ev.call();
    let mut arg_kinds = 0u32;
    let mut flagged = [""; 16];
    let mut n_flagged = 0;
    let mut hidden = false;
    for (name, v) in call.get("arguments").members_bytes() {
        let in_name = c.scan(name);
        let m = in_name | c.member(name, v);
        if m == 0 {
            continue;
        }
        arg_kinds |= m;
        if in_name != 0 {
            hidden = true;
        } else if n_flagged < flagged.len() {
            if let Some(f) = flag(alloc, name) {
                flagged[n_flagged] = f;
                n_flagged += 1;
            }
        }
    }
    let mut label_buf = [""; 32];
    let n_labels = c.labels(arg_kinds, alloc, &mut label_buf);
    let labels = keep(alloc, &label_buf[..n_labels]);
    let mut exfiltrate = false;
    for (k, v) in call.get("capabilities").members_bytes() {
        if k == b"can_exfiltrate" {
            exfiltrate = v.is_true();
        }
    }
    if !exfiltrate {
        return Ok(Verdict::abstain().labels(labels));
    }
    let (seen, marked) = c.session_kinds(ev);
    if arg_kinds == 0 && !marked {
        return Ok(Verdict::abstain());
    }
    let tool = call.get("tool").get_bytes(b"name").str_bytes().unwrap_or(b"");
    let mut reason = alloc.string();
    let code;
    if arg_kinds != 0 {
        code = CODE_ARGUMENTS;
        reason.push_str("the arguments");
        if n_flagged > 0 {
            reason.push_str(" (");
            for (i, f) in flagged[..n_flagged].iter().enumerate() {
                if i > 0 {
                    reason.push_str(", ");
                }
                reason.push_quoted(f.as_bytes());
            }
            reason.push(')');
        }
        if hidden {
            reason.push_str(" (in an argument's name)");
        }
        reason.push_str(" carry what looks like ");
        c.describe(arg_kinds, &mut reason);
        reason.push_str(", and ");
        reason.push_quoted(tool);
        reason.push_str(" can send data out");
        if marked {
            reason.push_str("; this session has also seen ");
            c.describe(seen, &mut reason);
        }
    } else {
        code = CODE_SESSION;
        reason.push_str("this session has seen ");
        c.describe(seen, &mut reason);
        reason.push_str(", and ");
        reason.push_quoted(tool);
        reason.push_str(" can send data out");
    }
    let reason = reason.as_str();
    let v = match c.mode {
        Decision::Deny => Verdict::deny(code, reason),
        _ => Verdict::ask(code, reason),
    };
    Ok(v.labels(labels).arguments(keep(alloc, &flagged[..n_flagged])))
}

/// A copy of items in the arena, for a verdict.
fn keep<'a>(alloc: Alloc<'a>, items: &[&'a str]) -> &'a [&'a str] {
    if items.is_empty() {
        return &[];
    }
    let size = core::mem::size_of::<&str>();
    let b = alloc.bytes(items.len() * size);
    // The arena is 8-aligned, more than &str needs.
    let p = b.as_mut_ptr() as *mut &'a str;
    unsafe {
        core::ptr::copy_nonoverlapping(items.as_ptr(), p, items.len());
        core::slice::from_raw_parts(p, items.len())
    }
}

/// Names a top-level argument as the verdict's "arguments" key takes it:
/// the name, or a JSON pointer when it starts with '/' or is empty; None
/// when the host could not take it (not UTF-8, over 256 bytes).
fn flag<'a>(alloc: Alloc<'a>, name: &'a [u8]) -> Option<&'a str> {
    let s = core::str::from_utf8(name).ok()?;
    if !s.is_empty() && !s.starts_with('/') {
        return if s.len() <= 256 { Some(s) } else { None };
    }
    let mut p = alloc.string();
    p.push('/');
    for ch in s.chars() {
        match ch {
            '~' => p.push_str("~0"),
            '/' => p.push_str("~1"),
            c => p.push(c),
        }
    }
    if p.len() <= 256 {
        Some(p.as_str())
    } else {
        None
    }
}


// What check and observe read (pdk/ABI.md section 14): the host sends
// nothing else; the config is read once per instance, at init.
static PLUGIN: Plugin<Config> = Plugin::new("secrets", "1.0.0", configure)
    .check(check)
    .observe(observe)
    .needs(&["labels", "capabilities", "tool", "arguments", "result"]);
export!(PLUGIN);
