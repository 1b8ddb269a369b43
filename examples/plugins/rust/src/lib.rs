//! rootguard: toolwarden's example policy in Rust (see ../README.md for the
//! policy; the conformance suite is pdk/testdata/conformance/rootguard.json).
//!
//! - deny a call whose "command" argument runs rm -rf;
//! - ask before a call whose "path" argument leaves the configured root;
//! - else abstain.
#![no_std]

use toolwarden_pdk::{export, Alloc, Error, Event, Kind, Plugin, Value, Verdict};

/// The config, read once per instance: the cleaned root, if any.
struct Config {
    root: Option<&'static str>,
}

fn configure(cfg: Value<'static>, alloc: Alloc<'static>) -> Result<Config, Error<'static>> {
    if cfg.kind() != Kind::Object {
        return Err(Error::bad_config("config: want an object"));
    }
    let r = cfg.get("root");
    if !r.exists() {
        return Ok(Config { root: None });
    }
    match r.str() {
        Some(s) if s.starts_with('/') => Ok(Config { root: Some(clean(alloc, s)) }),
        _ => Err(Error::bad_config("root: want an absolute path (a string starting with /)")),
    }
}

fn check<'a>(cfg: &'static Config, ev: &Event<'a>) -> Result<Verdict<'a>, Error<'a>> {
    let args = ev.arguments();
    if args.exists() && args.raw().is_none() {
        return Err(Error::bad_input("call.arguments is not valid JSON"));
    }
    if args.kind() != Kind::Object {
        return Ok(Verdict::abstain());
    }
    if let Some(cmd) = args.get("command").str() {
        if runs_rm_rf(cmd.as_bytes()) {
            return Ok(Verdict::deny("rm_rf", "command deletes recursively and by force (rm -rf)"));
        }
    }
    if let (Some(root), Some(p)) = (cfg.root, args.get("path").str()) {
        let alloc = ev.alloc();
        let p = if p.starts_with('/') { clean(alloc, p) } else { clean(alloc, alloc.concat(&[root, "/", p])) };
        if !within(root, p) {
            let reason = if p.len() <= 200 {
                alloc.concat(&["path \"", p, "\" is outside the root \"", root, "\""])
            } else {
                alloc.concat(&["path is outside the root \"", root, "\""])
            };
            return Ok(Verdict::ask("path_outside_root", reason));
        }
    }
    Ok(Verdict::abstain())
}

/// Resolves "." and ".." and repeated slashes in an absolute path,
/// lexically, like Go's path.Clean ("/.." is "/").
fn clean<'a>(alloc: Alloc<'a>, p: &str) -> &'a str {
    // buf holds "/seg/seg"; ".." cuts it back to the last '/'.
    let buf = alloc.bytes(p.len() + 1);
    let mut w = 1;
    buf[0] = b'/';
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                while w > 1 && buf[w - 1] != b'/' {
                    w -= 1;
                }
                if w > 1 {
                    w -= 1;
                }
            }
            _ => {
                if w > 1 {
                    buf[w] = b'/';
                    w += 1;
                }
                buf[w..w + seg.len()].copy_from_slice(seg.as_bytes());
                w += seg.len();
            }
        }
    }
    let buf: &'a [u8] = buf;
    // Whole segments of a &str were copied: always UTF-8.
    core::str::from_utf8(&buf[..w]).unwrap_or("/")
}

/// Whether the clean path p is root or below it.
fn within(root: &str, p: &str) -> bool {
    root == "/" || p == root || (p.len() > root.len() && p.starts_with(root) && p.as_bytes()[root.len()] == b'/')
}

/// "rm" at the start of a word, then white space and flag words ('-' and
/// letters, separated by white space) that hold r (or R) and f.
fn runs_rm_rf(c: &[u8]) -> bool {
    let space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let word = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
    for i in 0..c.len().saturating_sub(1) {
        if c[i] != b'r' || c[i + 1] != b'm' || (i > 0 && word(c[i - 1])) {
            continue;
        }
        let (mut j, mut r, mut f) = (i + 2, false, false);
        loop {
            let mut k = j;
            while k < c.len() && space(c[k]) {
                k += 1;
            }
            if k == j || k + 1 >= c.len() || c[k] != b'-' || !c[k + 1].is_ascii_alphabetic() {
                break;
            }
            k += 1;
            while k < c.len() && c[k].is_ascii_alphabetic() {
                r |= c[k] == b'r' || c[k] == b'R';
                f |= c[k] == b'f';
                k += 1;
            }
            j = k;
        }
        if r && f {
            return true;
        }
    }
    false
}

static PLUGIN: Plugin<Config> = Plugin::new("rootguard", "1.0.0", configure).check(check);
export!(PLUGIN);
