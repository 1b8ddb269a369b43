//! The scope an ask_glob rule proposes for remembering an approval
//! (../scope.go is the reference): the directory of the path asked about
//! ("dir", the default) or that path alone ("exact"), never the rule's own
//! glob, which would approve exactly what the rule exists to ask about.

use crate::resolve::Context;
use crate::{glob, matches, Hit, Rule};
use toolwarden_pdk::{Alloc, Decision, Event, Scope, Value};

/// The host's limit on a scope's pattern and argument, in bytes.
const MAX_SCOPE: usize = 256;

/// Normalizes a rule's "remember": "dir" by default on ask_glob, "none"
/// elsewhere; any other value, or one on another matcher, is an error.
pub(crate) fn check_remember(r: &mut Rule) -> Result<(), &'static str> {
    if r.remember.is_empty() {
        r.remember = if r.kind == "ask_glob" { "dir" } else { "none" };
        return Ok(());
    }
    if r.kind != "ask_glob" {
        return Err("only an ask_glob rule proposes a scope for remembering");
    }
    match r.remember {
        "dir" | "exact" | "none" => Ok(()),
        _ => Err("want \"dir\", \"exact\" or \"none\""),
    }
}

fn value<'a>(r: &Rule, args: Value<'a>) -> Value<'a> {
    if r.pointer {
        args.pointer(r.arg)
    } else {
        args.get_bytes(r.arg.as_bytes())
    }
}

/// The scope an ask of rules[bi] proposes: only for an ask_glob rule that
/// remembers, on a string argument the verdict names, whose path resolved,
/// when no later ask rule matches the call too.
#[allow(clippy::too_many_arguments)]
pub(crate) fn propose<'a>(
    rules: &'static [Rule],
    bi: usize,
    h: &Hit<'a>,
    tool: &[u8],
    app: &[u8],
    args: Value<'a>,
    ctx: &mut Option<Context<'a>>,
    ev: &Event<'a>,
    alloc: Alloc<'a>,
) -> Option<Scope<'a>> {
    let best = &rules[bi];
    if best.decision != Decision::Ask || best.remember == "none" || !best.flag || !h.why.is_empty() {
        return None;
    }
    let s = value(best, args).str_bytes()?;
    let p = if h.resolved.is_empty() { s } else { h.resolved };
    if p.first() != Some(&b'/') {
        return None;
    }
    let p = glob::clean(p, alloc);
    let dir = match p.iter().rposition(|&c| c == b'/') {
        Some(0) | None => &b"/"[..],
        Some(i) => &p[..i],
    };
    let mut g = alloc.string();
    if best.remember == "dir" && dir != b"/" {
        escape(&mut g, dir)?;
        g.push_str("/**");
    } else {
        escape(&mut g, p)?;
    }
    let g = g.as_str();
    let arg = if best.pointer {
        best.arg
    } else {
        let mut a = alloc.string();
        a.push('/');
        for c in best.arg.chars() {
            match c {
                '~' => a.push_str("~0"),
                '/' => a.push_str("~1"),
                c => a.push(c),
            }
        }
        a.as_str()
    };
    if g.len() > MAX_SCOPE || arg.len() > MAX_SCOPE || g.bytes().any(|c| c < 0x20 || c == 0x7f) {
        return None;
    }
    for r in &rules[bi + 1..] {
        if r.decision != Decision::Ask || !glob::name_match(r.tool.as_bytes(), tool) || !glob::name_match(r.app.as_bytes(), app) {
            continue;
        }
        let v = value(r, args);
        if v.exists() && matches(r, v, ctx, ev, alloc).1 {
            return None;
        }
    }
    Some(Scope { arg, glob: g, regex: "" })
}

/// Appends p with glob metacharacters escaped; None when p is not UTF-8
/// (the host takes only UTF-8 patterns).
fn escape(out: &mut toolwarden_pdk::StrBuf<'_>, p: &[u8]) -> Option<()> {
    let p = core::str::from_utf8(p).ok()?;
    for c in p.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    Some(())
}

/// A one-scope slice in the event's arena (which is 8-aligned).
pub(crate) fn one<'a>(sc: Scope<'a>, alloc: Alloc<'a>) -> &'a [Scope<'a>] {
    debug_assert!(core::mem::align_of::<Scope<'a>>() <= 8);
    let p = alloc.bytes(core::mem::size_of::<Scope<'a>>()).as_mut_ptr() as *mut Scope<'a>;
    unsafe {
        p.write(sc);
        core::slice::from_raw_parts(p, 1)
    }
}
